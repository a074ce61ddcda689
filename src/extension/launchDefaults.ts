// The launch configurations the extension offers: the first launch.json, and the snippets of "Add Configuration…".

import { DEBUG_TYPE } from './ids';

export const INITIAL_CONFIGURATIONS = [{ type: DEBUG_TYPE, request: 'launch', name: 'Logbook: run agent script', program: '${file}', input: {} }];

export const CONFIGURATION_SNIPPETS = [
  {
    label: 'Logbook: New run',
    description: 'Start a new run of an agent script under the debugger.',
    body: { type: DEBUG_TYPE, request: 'launch', name: 'Logbook: ${1:new run}', program: '^"\\${workspaceFolder}/${2:agent.ts}"', input: {} },
  },
  {
    label: 'Logbook: Resume latest run',
    description: 'Resume the newest run of this agent, stopping before the replay starts.',
    body: {
      type: DEBUG_TYPE,
      request: 'launch',
      name: 'Logbook: resume latest',
      program: '^"\\${workspaceFolder}/${1:agent.ts}"',
      resume: 'latest',
      stopOnEntry: true,
    },
  },
  {
    label: 'Logbook: Rehearse a crash at an action',
    description: 'Start a run that is killed (SIGKILL) at a fault point, e.g. right after an action started.',
    body: {
      type: DEBUG_TYPE,
      request: 'launch',
      name: 'Logbook: rehearse a crash',
      program: '^"\\${workspaceFolder}/${1:agent.ts}"',
      input: {},
      crashAt: '${2:email.send#3@after-start}',
    },
  },
];
