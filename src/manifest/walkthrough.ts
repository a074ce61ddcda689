// The getting-started walkthrough (contributes.walkthroughs): from opening an agent to killing and resuming its run.

import { COMMANDS, RUNS_VIEW } from '../extension/ids';

const WALKTHROUGH_MEDIA = 'media/walkthrough';

/** Each step: what to do, the button that does it, and the event that ticks it off. */
const STEPS = [
  {
    id: 'openAgent',
    title: 'Open an agent',
    description: `An agent is a script of named steps and declared side effects (\`run.step\`, \`run.do\`). Open the example: an email campaign whose provider can say whether it already sent an email.\n[Open an Example Agent](command:${COMMANDS.openExample.id})`,
    media: { markdown: `${WALKTHROUGH_MEDIA}/open-agent.md` },
    completionEvents: [`onCommand:${COMMANDS.openExample.id}`],
  },
  {
    id: 'runIt',
    title: 'Run it under the debugger',
    description:
      'With the agent in the editor, press F5: no launch.json is needed. Set a breakpoint on the `run.do(…)` line first to stop before each email.\n[Start Debugging](command:workbench.action.debug.start)',
    media: { markdown: `${WALKTHROUGH_MEDIA}/run-it.md` },
    completionEvents: ['onCommand:workbench.action.debug.start'],
  },
  {
    id: 'watchJournal',
    title: 'Watch the journal',
    description: `The Agent Logbook view lists every run of the workspace journal, live: steps, actions, their effect and status.\n[Show the Runs View](command:${RUNS_VIEW}.focus)`,
    media: { markdown: `${WALKTHROUGH_MEDIA}/watch-journal.md` },
    completionEvents: [`onView:${RUNS_VIEW}`],
  },
  {
    id: 'killRun',
    title: 'Kill the run mid-action',
    description: `While the run is paused, or sending, kill it: a real SIGKILL of the process that writes the journal. An action caught between "started" and "committed" is left in doubt.\n[Kill Run](command:${COMMANDS.killRun.id})`,
    media: { markdown: `${WALKTHROUGH_MEDIA}/kill-run.md` },
    completionEvents: [`onCommand:${COMMANDS.killRun.id}`],
  },
  {
    id: 'resumeRun',
    title: 'Resume it',
    description: `Resume the run: committed emails are skipped, the one in doubt is reconciled through its verify hook, and only the rest are sent.\n[Resume Run](command:${COMMANDS.resumeRun.id})`,
    media: { markdown: `${WALKTHROUGH_MEDIA}/resume-run.md` },
    completionEvents: [`onCommand:${COMMANDS.resumeRun.id}`],
  },
] as const;

export function walkthroughs(): unknown[] {
  return [
    {
      id: 'gettingStarted',
      title: 'Get started with Agent Logbook',
      description: 'Run an agent, kill it in the middle of a side effect, and watch it resume instead of retrying.',
      featuredFor: ['**/.logbook/journal.db'],
      steps: STEPS,
    },
  ];
}

/** The markdown files the steps show, for the packaging test. */
export const WALKTHROUGH_FILES: readonly string[] = STEPS.map((s) => s.media.markdown);
