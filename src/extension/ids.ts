// The one source of truth for the ids the manifest and the code share: commands, views, context values, settings.

export const EXTENSION_ID = 'agent-logbook.agent-logbook';
export const DEBUG_TYPE = 'logbook';
export const CONTAINER_ID = 'agentLogbook';
export const RUNS_VIEW = 'logbook.runs';
export const OUTPUT_NAME = 'Agent Logbook';

export { COMMANDS, COMMAND_CATEGORY, paletteName, type CommandKey } from '../manifest/commandTable';

/** Settings under `logbook.*`. */
export const SETTINGS = {
  section: 'logbook',
  journal: 'journal',
  /** The deprecated name of `journal`, still read (with a warning once a session). */
  legacyJournal: 'databasePath',
  readerRole: 'readerRole',
  runtimeExecutable: 'runtimeExecutable',
  autoRefresh: 'autoRefresh',
  envFile: 'envFile',
  env: 'env',
  rehearse: 'rehearse',
} as const;

/** Context keys set with `setContext`. */
export const CONTEXT = {
  hasRuns: 'logbook.hasRuns',
  readerFailed: 'logbook.readerFailed',
  /** The active editor holds an agent script (a `defineAgent(` call): the Run/Debug buttons show. */
  agentEditor: 'logbook.agentEditor',
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
  /** `logbook cancel` takes it: it has not ended (a live run is asked to stop at its next boundary). */
  cancellable: 'cancellable',
  deletable: 'deletable',
  live: 'live',
  inDoubt: 'inDoubt',
  awaitingApproval: 'awaitingApproval',
  /** A run stopped in run.waitFor: an event sent to it continues it. */
  waiting: 'waiting',
  hasKey: 'hasKey',
  hasSource: 'hasSource',
  checkpoint: 'checkpoint',
  /** A model call or tool call journaled by agent-logbook/ai: it opens whole as a Markdown record. */
  aiCall: 'aiCall',
  /** A committed model call: a what-if fork can answer it otherwise. */
  whatIf: 'whatIf',
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
