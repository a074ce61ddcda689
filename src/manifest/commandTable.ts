// The commands' ids and titles, shared by the manifest, the extension and the messages the adapter and runner print.

/** Every command the extension contributes; `title` and `icon` feed the generated manifest. */
export const COMMANDS = {
  killRun: { id: 'logbook.killRun', title: 'Kill Run (simulate crash)', icon: '$(debug-disconnect)' },
  resumeRun: { id: 'logbook.resumeRun', title: 'Resume Run', icon: '$(debug-continue)' },
  compensateRun: { id: 'logbook.compensateRun', title: 'Compensate Run', icon: '$(discard)' },
  cancelRun: { id: 'logbook.cancelRun', title: 'Cancel Run…', icon: '$(circle-slash)' },
  approveAction: { id: 'logbook.approveAction', title: 'Approve', icon: '$(check)' },
  rejectAction: { id: 'logbook.rejectAction', title: 'Reject', icon: '$(close)' },
  sendEvent: { id: 'logbook.sendEvent', title: 'Send Event…', icon: '$(mail)' },
  decideHappened: { id: 'logbook.decideHappened', title: 'Decide: It Happened', icon: undefined },
  decideNotHappened: { id: 'logbook.decideNotHappened', title: 'Decide: It Did Not Happen', icon: undefined },
  revealSource: { id: 'logbook.revealSource', title: 'Reveal in Source', icon: '$(go-to-file)' },
  copyKey: { id: 'logbook.copyIdempotencyKey', title: 'Copy Idempotency Key', icon: '$(copy)' },
  openCheckpoint: { id: 'logbook.openCheckpoint', title: 'Open Checkpoint as JSON', icon: '$(json)' },
  forkWithEditedAnswer: { id: 'logbook.forkWithEditedAnswer', title: 'What-If: Fork with an Edited Answer…', icon: '$(repo-forked)' },
  openCallRecord: { id: 'logbook.openCallRecord', title: 'Open Model or Tool Call in Full', icon: '$(comment-discussion)' },
  deleteRun: { id: 'logbook.deleteRun', title: 'Delete Run', icon: '$(trash)' },
  refresh: { id: 'logbook.refresh', title: 'Refresh', icon: '$(refresh)' },
  openTimeline: { id: 'logbook.openTimeline', title: 'Open Run Timeline', icon: '$(graph-line)' },
  createLaunchConfig: { id: 'logbook.createLaunchConfig', title: 'Create a Launch Configuration', icon: undefined },
  openExample: { id: 'logbook.openExample', title: 'Open an Example Agent', icon: undefined },
  showLog: { id: 'logbook.showLog', title: 'Show Log', icon: undefined },
  loadMore: { id: 'logbook.loadMore', title: 'Load More', icon: undefined },
  runAgent: { id: 'logbook.runAgent', title: 'Run Agent', icon: '$(run)' },
  debugAgent: { id: 'logbook.debugAgent', title: 'Debug Agent', icon: '$(debug-alt)' },
  rehearseAgent: { id: 'logbook.rehearseAgent', title: 'Rehearse Agent (kill it at every point)', icon: '$(beaker)' },
  setJournalPassword: { id: 'logbook.setJournalPassword', title: 'Set Journal Password', icon: undefined },
} as const;

export type CommandKey = keyof typeof COMMANDS;
export const COMMAND_CATEGORY = 'Agent Logbook';

/** A command as the Command Palette lists it ("Agent Logbook: Resume Run"): what messages tell a person to pick. */
export function paletteName(k: CommandKey): string {
  return `${COMMAND_CATEGORY}: ${COMMANDS[k].title}`;
}

/** The places a command is offered, as a person finds them on screen. */
export const PLACES = {
  runsView: 'the Agent Logbook Runs view',
  debugToolbar: 'the debug toolbar',
} as const;
