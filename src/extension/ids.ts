// The one source of truth for the ids the manifest and the code share: commands, views, context values, settings.

export const EXTENSION_ID = 'agent-logbook.agent-logbook';
export const DEBUG_TYPE = 'logbook';
export const CONTAINER_ID = 'agentLogbook';
export const RUNS_VIEW = 'logbook.runs';
export const OUTPUT_NAME = 'Agent Logbook';

/** Every command the extension contributes; `title` and `icon` feed the generated manifest. */
export const COMMANDS = {
  killRun: { id: 'logbook.killRun', title: 'Kill Run (simulate crash)', icon: '$(debug-disconnect)' },
  resumeRun: { id: 'logbook.resumeRun', title: 'Resume Run', icon: '$(debug-continue)' },
  compensateRun: { id: 'logbook.compensateRun', title: 'Compensate Run', icon: '$(discard)' },
  approveAction: { id: 'logbook.approveAction', title: 'Approve', icon: '$(check)' },
  rejectAction: { id: 'logbook.rejectAction', title: 'Reject', icon: '$(close)' },
  decideHappened: { id: 'logbook.decideHappened', title: 'Decide: It Happened', icon: undefined },
  decideNotHappened: { id: 'logbook.decideNotHappened', title: 'Decide: It Did Not Happen', icon: undefined },
  revealSource: { id: 'logbook.revealSource', title: 'Reveal in Source', icon: '$(go-to-file)' },
  copyKey: { id: 'logbook.copyIdempotencyKey', title: 'Copy Idempotency Key', icon: '$(copy)' },
  openCheckpoint: { id: 'logbook.openCheckpoint', title: 'Open Checkpoint as JSON', icon: '$(json)' },
  deleteRun: { id: 'logbook.deleteRun', title: 'Delete Run', icon: '$(trash)' },
  refresh: { id: 'logbook.refresh', title: 'Refresh', icon: '$(refresh)' },
  openTimeline: { id: 'logbook.openTimeline', title: 'Open Run Timeline', icon: '$(graph-line)' },
  createLaunchConfig: { id: 'logbook.createLaunchConfig', title: 'Create a Launch Configuration', icon: undefined },
  openExample: { id: 'logbook.openExample', title: 'Open an Example Agent', icon: undefined },
  showLog: { id: 'logbook.showLog', title: 'Show Log', icon: undefined },
  loadMore: { id: 'logbook.loadMore', title: 'Load More', icon: undefined },
} as const;

export type CommandKey = keyof typeof COMMANDS;
export const COMMAND_CATEGORY = 'Agent Logbook';

/** Settings under `logbook.*`. */
export const SETTINGS = {
  section: 'logbook',
  databasePath: 'databasePath',
  runtimeExecutable: 'runtimeExecutable',
  autoRefresh: 'autoRefresh',
} as const;

/** Context keys set with `setContext`. */
export const CONTEXT = {
  hasRuns: 'logbook.hasRuns',
  readerFailed: 'logbook.readerFailed',
} as const;

/**
 * Tree items' contextValue: a kind token and flag tokens separated by spaces, so `when` clauses match with
 * `viewItem =~ /\bflag\b/` and one item can offer several commands.
 */
export const ITEM = {
  run: 'logbook.run',
  step: 'logbook.step',
  action: 'logbook.action',
  detail: 'logbook.detail',
  loadMore: 'logbook.loadMore',
  message: 'logbook.message',
} as const;

export const FLAG = {
  resumable: 'resumable',
  compensable: 'compensable',
  deletable: 'deletable',
  live: 'live',
  inDoubt: 'inDoubt',
  awaitingApproval: 'awaitingApproval',
  hasKey: 'hasKey',
  hasSource: 'hasSource',
  checkpoint: 'checkpoint',
} as const;
export type Flag = (typeof FLAG)[keyof typeof FLAG];

export function contextValue(kind: (typeof ITEM)[keyof typeof ITEM], flags: readonly Flag[]): string {
  return [kind, ...flags].join(' ');
}

/** The `when` clause matching items of `kind` carrying every flag in `flags`. */
export function whenItem(kind: (typeof ITEM)[keyof typeof ITEM], ...flags: Flag[]): string {
  const esc = kind.replace('.', '\\.');
  return [`view == ${RUNS_VIEW}`, `viewItem =~ /^${esc}\\b/`, ...flags.map((f) => `viewItem =~ /\\b${f}\\b/`)].join(' && ');
}
