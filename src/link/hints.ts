// The sentences that send a person to a command: titles come from the manifest's single source, never retyped here.

import { COMMANDS, PLACES, paletteName } from '../manifest/commandTable';

/** After a crash: how to resume `runId` from the editor or a launch configuration. */
export function resumeHint(runId: string): string {
  return `Resume it: "${paletteName('resumeRun')}" in the Command Palette, or "${COMMANDS.resumeRun.title}" on the run in ${PLACES.runsView}, or launch with "resume": "${runId}".`;
}

/** At an approval gate the run left waiting. */
export function approveHint(runId: string, actionId: string): string {
  return `Approve it ("${COMMANDS.approveAction.title}" on the action in ${PLACES.runsView}, or \`logbook approve ${runId} ${actionId}\`)`;
}

/** At a run.waitFor the run left waiting. */
export function sendHint(runId: string, event: string): string {
  return `Send it ("${COMMANDS.sendEvent.title}" on the run in ${PLACES.runsView}, or \`logbook send ${runId} ${event} --data JSON\`), which continues the run`;
}

/** At an in-doubt action with no verify, while the debugger is stopped there. */
export function decideHint(): string {
  return `"${COMMANDS.decideHappened.title}" or "${COMMANDS.decideNotHappened.title}" on the action in ${PLACES.runsView}`;
}
