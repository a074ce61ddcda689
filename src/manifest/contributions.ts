// Generates package.json's activation events, capabilities and `contributes` from the ids and the launch zod schema.

import { launchJsonSchema } from '../adapter/launchConfig';
import { CONFIGURATION_SNIPPETS, INITIAL_CONFIGURATIONS } from '../extension/launchDefaults';
import { walkthroughs } from './walkthrough';
import { COMMANDS, COMMAND_CATEGORY, CONTAINER_ID, CONTEXT, DEBUG_TYPE, FLAG, ITEM, RUNS_VIEW, SETTINGS, whenItem, type CommandKey } from '../extension/ids';

const trusted = 'isWorkspaceTrusted';
const inLogbookDebug = `debugType == ${DEBUG_TYPE}`;

type Menu = { command: string; when?: string; group?: string };

const cmd = (k: CommandKey): string => COMMANDS[k].id;

/** Commands that only make sense on a tree item: hidden from the palette. */
const ITEM_ONLY: CommandKey[] = [
  'approveAction',
  'rejectAction',
  'decideHappened',
  'decideNotHappened',
  'revealSource',
  'copyKey',
  'openCheckpoint',
  'openCallRecord',
  'forkWithEditedAnswer',
  'loadMore',
];

function menus(): Record<string, Menu[]> {
  const run = ITEM.run;
  const action = ITEM.action;
  return {
    'view/title': [
      { command: cmd('refresh'), when: `view == ${RUNS_VIEW}`, group: 'navigation@1' },
      { command: cmd('createLaunchConfig'), when: `view == ${RUNS_VIEW}`, group: '2_create' },
      { command: cmd('showLog'), when: `view == ${RUNS_VIEW}`, group: '9_log' },
    ],
    'view/item/context': [
      { command: cmd('sendEvent'), when: `${whenItem(run, FLAG.waiting)} && ${trusted}`, group: 'inline@0' },
      { command: cmd('resumeRun'), when: `${whenItem(run, FLAG.resumable)} && ${trusted}`, group: 'inline@1' },
      { command: cmd('openTimeline'), when: whenItem(run), group: 'inline@2' },
      { command: cmd('sendEvent'), when: `${whenItem(run, FLAG.waiting)} && ${trusted}`, group: '1_run@0' },
      { command: cmd('resumeRun'), when: `${whenItem(run, FLAG.resumable)} && ${trusted}`, group: '1_run@1' },
      { command: cmd('compensateRun'), when: `${whenItem(run, FLAG.compensable)} && ${trusted}`, group: '1_run@2' },
      { command: cmd('killRun'), when: whenItem(run, FLAG.live), group: '1_run@3' },
      { command: cmd('cancelRun'), when: `${whenItem(run, FLAG.cancellable)} && ${trusted}`, group: '1_run@4' },
      { command: cmd('openTimeline'), when: whenItem(run), group: '2_show@1' },
      { command: cmd('openCheckpoint'), when: whenItem(run, FLAG.checkpoint), group: '2_show@2' },
      { command: cmd('deleteRun'), when: `${whenItem(run, FLAG.deletable)} && ${trusted}`, group: '9_delete@1' },
      { command: cmd('revealSource'), when: whenItem(ITEM.step, FLAG.hasSource), group: '2_show@1' },
      { command: cmd('openCheckpoint'), when: whenItem(ITEM.step, FLAG.checkpoint), group: '2_show@2' },
      { command: cmd('approveAction'), when: `${whenItem(action, FLAG.awaitingApproval)} && ${trusted}`, group: 'inline@1' },
      { command: cmd('rejectAction'), when: `${whenItem(action, FLAG.awaitingApproval)} && ${trusted}`, group: 'inline@2' },
      { command: cmd('approveAction'), when: `${whenItem(action, FLAG.awaitingApproval)} && ${trusted}`, group: '1_decide@1' },
      { command: cmd('rejectAction'), when: `${whenItem(action, FLAG.awaitingApproval)} && ${trusted}`, group: '1_decide@2' },
      { command: cmd('decideHappened'), when: `${whenItem(action, FLAG.inDoubt)} && ${trusted}`, group: '1_decide@3' },
      { command: cmd('decideNotHappened'), when: `${whenItem(action, FLAG.inDoubt)} && ${trusted}`, group: '1_decide@4' },
      { command: cmd('revealSource'), when: whenItem(action, FLAG.hasSource), group: '2_show@1' },
      { command: cmd('copyKey'), when: whenItem(action, FLAG.hasKey), group: '2_show@2' },
      { command: cmd('openCallRecord'), when: whenItem(action, FLAG.aiCall), group: 'inline@3' },
      { command: cmd('openCallRecord'), when: whenItem(action, FLAG.aiCall), group: '2_show@3' },
      { command: cmd('forkWithEditedAnswer'), when: `${whenItem(action, FLAG.whatIf)} && ${trusted}`, group: '1_decide@5' },
      { command: cmd('copyKey'), when: whenItem(ITEM.detail, FLAG.hasKey), group: 'inline@1' },
    ],
    // The Run / Debug buttons in the editor's title, as the Python and JavaScript debuggers give, on agent scripts only.
    'editor/title/run': [
      { command: cmd('runAgent'), when: `${CONTEXT.agentEditor} && ${trusted}`, group: 'navigation@0' },
      { command: cmd('debugAgent'), when: `${CONTEXT.agentEditor} && ${trusted}`, group: 'navigation@1' },
    ],
    'debug/toolBar': [
      { command: cmd('killRun'), when: inLogbookDebug, group: 'navigation@10' },
      { command: cmd('compensateRun'), when: `${inLogbookDebug} && ${trusted}`, group: 'navigation@11' },
      { command: cmd('cancelRun'), when: `${inLogbookDebug} && ${trusted}`, group: 'navigation@12' },
    ],
    commandPalette: [
      ...ITEM_ONLY.map((k) => ({ command: cmd(k), when: 'false' })),
      { command: cmd('resumeRun'), when: trusted },
      { command: cmd('compensateRun'), when: trusted },
      { command: cmd('cancelRun'), when: trusted },
      { command: cmd('sendEvent'), when: trusted },
      { command: cmd('deleteRun'), when: trusted },
      { command: cmd('runAgent'), when: `${CONTEXT.agentEditor} && ${trusted}` },
      { command: cmd('debugAgent'), when: `${CONTEXT.agentEditor} && ${trusted}` },
      { command: cmd('rehearseAgent'), when: `${CONTEXT.agentEditor} && ${trusted}` },
    ],
  };
}

function commands(): Array<Record<string, string>> {
  return (Object.keys(COMMANDS) as CommandKey[]).map((k) => {
    const c = COMMANDS[k];
    return { command: c.id, title: c.title, category: COMMAND_CATEGORY, ...(c.icon ? { icon: c.icon } : {}) };
  });
}

export function contributions(): { activationEvents: string[]; capabilities: unknown; contributes: unknown } {
  return {
    // A project with agent-logbook installed activates at once (no glob: VS Code stats the path), so its agents are in
    // the Testing view before any file is opened.
    activationEvents: [
      `onDebugResolve:${DEBUG_TYPE}`,
      `onDebugDynamicConfigurations:${DEBUG_TYPE}`,
      'onDebugInitialConfigurations',
      `onView:${RUNS_VIEW}`,
      'workspaceContains:.logbook/journal.db',
      'workspaceContains:node_modules/agent-logbook/package.json',
      'onLanguage:typescript',
      'onLanguage:javascript',
    ],
    capabilities: {
      untrustedWorkspaces: {
        supported: 'limited',
        description: 'In an untrusted workspace the journal can be browsed, but no agent script, resume, compensation or decision runs.',
        restrictedConfigurations: [
          SETTINGS.runtimeExecutable,
          SETTINGS.journal,
          SETTINGS.legacyJournal,
          SETTINGS.readerRole,
          SETTINGS.envFile,
          SETTINGS.env,
          SETTINGS.rehearse,
        ].map((s) => `${SETTINGS.section}.${s}`),
      },
      virtualWorkspaces: {
        supported: false,
        description: "The journal is a SQLite file on a local disk, or a PostgreSQL server the editor's machine reaches.",
      },
    },
    contributes: {
      debuggers: [
        {
          type: DEBUG_TYPE,
          label: 'Agent Logbook',
          languages: ['typescript', 'javascript'],
          configurationAttributes: { launch: launchJsonSchema() },
          initialConfigurations: INITIAL_CONFIGURATIONS,
          configurationSnippets: CONFIGURATION_SNIPPETS,
        },
      ],
      breakpoints: [{ language: 'typescript' }, { language: 'javascript' }],
      commands: commands(),
      menus: menus(),
      keybindings: [
        // F5 on an agent script starts Logbook without the "Select debugger" picker, but only where F5 would otherwise
        // ask: no launch configuration selected in the Run and Debug view, and no session running.
        { command: cmd('debugAgent'), key: 'f5', when: `${CONTEXT.agentEditor} && !inDebugMode && !debugConfigurationType && ${trusted}` },
      ],
      viewsContainers: { activitybar: [{ id: CONTAINER_ID, title: 'Agent Logbook', icon: 'media/logbook.svg' }] },
      views: { [CONTAINER_ID]: [{ id: RUNS_VIEW, name: 'Runs', icon: 'media/logbook.svg', contextualTitle: 'Agent Logbook' }] },
      viewsWelcome: [
        {
          view: RUNS_VIEW,
          contents: `No agent runs in this workspace yet.\nOpen an agent script and press F5, or:\n[Create a Launch Configuration](command:${cmd('createLaunchConfig')})\n[Open an Example Agent](command:${cmd('openExample')})`,
          when: `!${CONTEXT.hasRuns}`,
        },
      ],
      walkthroughs: walkthroughs(),
      configuration: {
        title: 'Agent Logbook',
        properties: {
          [`${SETTINGS.section}.${SETTINGS.journal}`]: {
            type: 'string',
            default: '.logbook/journal.db',
            scope: 'resource',
            markdownDescription:
              "The journal: a SQLite file, relative to the workspace folder (or absolute; `${workspaceFolder}` is expanded), or a shared PostgreSQL journal as `postgres://user@host:port/database` **without a password** (a URL with one is refused: settings files are often committed). The password comes from the command **Agent Logbook: Set Journal Password** (VS Code's secret storage), or `PGPASSWORD` / `~/.pgpass` of the environment VS Code starts in. Left empty, a `postgres://` `$LOGBOOK_JOURNAL` of that environment is used.",
          },
          [`${SETTINGS.section}.${SETTINGS.legacyJournal}`]: {
            type: 'string',
            scope: 'resource',
            markdownDescription: 'The old name of `#logbook.journal#` (same meaning), read when `#logbook.journal#` is not set.',
            markdownDeprecationMessage: 'Deprecated: renamed to `#logbook.journal#` (same meaning). Move the value there.',
          },
          [`${SETTINGS.section}.${SETTINGS.readerRole}`]: {
            type: 'string',
            default: '',
            scope: 'resource',
            markdownDescription:
              "A read-only PostgreSQL role the sidebar's journal reader connects as (same server and database as `#logbook.journal#`). Resume, decide, approve and compensate still connect as the URL's user. Its password is set with **Agent Logbook: Set Journal Password**.",
          },
          [`${SETTINGS.section}.${SETTINGS.runtimeExecutable}`]: {
            type: 'string',
            default: 'node',
            scope: 'machine-overridable',
            markdownDescription:
              'The Node.js (20 or newer) that runs the journal reader, the CLI and the debug adapter. VS Code never loads the journal itself.',
          },
          [`${SETTINGS.section}.${SETTINGS.envFile}`]: {
            type: 'string',
            default: '',
            scope: 'resource',
            markdownDescription:
              "A `.env` file (KEY=VALUE lines), relative to the workspace folder, whose variables every process the extension starts gets: debug sessions (with or without launch.json), Resume from the Runs view, the CLI commands and the Run button. A launch configuration's `envFile` and `env` override it. Values of names with KEY, TOKEN, SECRET or PASSWORD are masked in Variables and logs.",
          },
          [`${SETTINGS.section}.${SETTINGS.env}`]: {
            type: 'object',
            default: {},
            additionalProperties: { type: 'string' },
            scope: 'resource',
            markdownDescription:
              "Environment variables for every process the extension starts, over `#logbook.envFile#`'s. Prefer `#logbook.envFile#` for secrets: settings files are often committed.",
          },
          [`${SETTINGS.section}.${SETTINGS.rehearse}`]: {
            type: 'object',
            default: { points: 'all', random: 10, seed: '', jobs: 0 },
            scope: 'resource',
            properties: {
              input: { description: 'The input (JSON) to rehearse agents with when no `logbook` launch configuration of the agent gives one.' },
              points: {
                type: 'string',
                enum: ['all', 'random'],
                default: 'all',
                description: 'What the Rehearse CodeLens runs: every kill point, or a seeded random sample.',
              },
              random: { type: 'integer', minimum: 1, default: 10, description: 'How many points the "Random sample" profile tries.' },
              seed: { type: 'string', default: '', description: 'The seed of the random sample (empty: a new one each run; the Test Results show it).' },
              jobs: { type: 'integer', minimum: 0, default: 0, description: 'Parallel campaigns (0: one per core).' },
            },
            additionalProperties: false,
            markdownDescription:
              'Rehearsal in the Test Explorer: each agent is a test, each kill point a child. The input comes from a `logbook` launch configuration of the agent (its `input` or `inputFile`), else `input` here. Runs `logbook rehearse` on `#logbook.runtimeExecutable#`; nothing runs in an untrusted workspace.',
          },
          [`${SETTINGS.section}.${SETTINGS.autoRefresh}`]: {
            type: 'boolean',
            default: true,
            markdownDescription: 'Update the runs view, decorations and timelines as soon as the journal changes.',
          },
        },
      },
    },
  };
}
