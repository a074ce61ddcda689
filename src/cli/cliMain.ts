// The `logbook` command line: run, resume, compensate, approve/reject, ls, show (exit codes 0–5, see EXIT).

import * as fs from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, ErrorCodes, LogbookError, describe, exitCodeOf, isStorageCode } from '../runtime/errors';
import { Faults, checkCrashTargets, formatCrashSpec, parseCrashSpec, unreachedCrashPoints, type CrashSpec, type FaultHit } from '../runtime/faults';
import { actionRegistry, runTimeActionTypePrefixes, type AgentDefinition } from '../runtime/define';
import { isPostgresUrl, openStore, redactUrl, type Store } from '../runtime/store';
import { newRunId, startRun, resumeRun, recordApproval, type RunOutcome } from '../runtime/engine';
import { continueAfterSend, continueRun, sendEvent, sendReportLine, type Continued, type SendReport } from '../runtime/send';
import { compensateRun, type CompensationReport } from '../runtime/compensate';
import type { Decision, RunStatus } from '../runtime/types';
import type { DecisionInput } from '../runtime/decisions';
import { runExitCode } from '../runtime/policy';
import { agentNamed, loadScript } from '../loader/loadScript';
import { listRuns, showRun, type Damage } from './inspect';
import { paint, runStatusWord } from './format';
import { dbPath, setStateDir, type Io } from './journalOption';
import { COMMAND_MODULES } from './commandModules';
import { detachRun } from './detach';
import { callerContextFromEnv } from '../runtime/trace/env';
import type { CallerContext } from '../runtime/trace/spans';
import { isStorageError, storageError } from '../runtime/store/storageError';
import { SecretMask, urlSecrets } from '../shared/secrets';
import { currentJournalFlag, journalFlagCount, journalFlagValue } from '../shared/journalNames';

const USAGE = `logbook — durable agent runs that resume instead of retry

Usage:
  logbook run <script> [--input JSON | --input-file F] [--run-id ID] [--journal F] [--crash-at SPEC]... [--json]
  logbook run --detach <script> [--input JSON | --input-file F] [--run-id ID]   (queued for \`logbook worker\`; prints the run id)
  logbook resume <run-id> [--decide <action-id>=happened|not-happened [--result JSON]]... [--now] [--crash-at SPEC]... [--script F] [--json]
  logbook compensate <run-id> [--decide ...] [--crash-at SPEC]... [--script F] [--json]
  logbook approve <run-id> <action-id> [--note TEXT] [--no-resume] [--json]
  logbook reject <run-id> <action-id> [--note TEXT] [--no-resume] [--json]
  logbook send <run-id> <name> [--data JSON] [--id DEDUPE-ID] [--no-resume] [--script F] [--crash-at SPEC]... [--json]
  logbook ls [--json] [--limit N]
  logbook show <run-id> [--json]
${COMMAND_MODULES.map((c) => `  ${c.usage}`).join('\n')}
Common options: --journal F (default .logbook/journal.db, or $LOGBOOK_JOURNAL)
Crash specs: <action type or step name>#<n>@<phase>, phase = before | after-checkpoint | before-start | after-start |
  after-execute | after-execute-throw | after-commit | compensate:after-start | compensate:after-execute | cancel:after-stop |
  sleep:after-start | event:after-deliver | child:after-start | child:after-end (the last two name the child's agent)
  (e.g. email.send#30@after-execute; nap#1@sleep:after-start; reply@event:after-deliver; after-execute-throw makes
  execute throw after its effect instead of crashing)
Exit codes: 0 completed or compensated, 1 failed or interrupted, 2 bad usage or input, 3 stopped for a decision, an approval or an event,
  4 busy (another live process drives the run), 5 stopped by a journal/storage error (locked, disk full, read-only,
  damaged); the run is resumable.`;

/**
 * `logbook <command> --help` (or `-h`, anywhere before a `--`): that command's lines of the usage, and the options
 * every command takes. Undefined when it is not a help request, or the command is unknown (which the switch refuses).
 */
export function commandHelp(command: string, rest: readonly string[]): string | undefined {
  const end = rest.indexOf('--');
  if (!(end < 0 ? rest : rest.slice(0, end)).some((a) => a === '--help' || a === '-h')) return undefined;
  const lines = USAGE.split('\n').filter((l) => l.startsWith(`  logbook ${command} `) || l === `  logbook ${command}`);
  if (!lines.length) return undefined;
  const all = USAGE.split('\n');
  const crashSpecs = lines.some((l) => l.includes('--crash-at'))
    ? all.slice(
        all.findIndex((l) => l.startsWith('Crash specs:')),
        all.findIndex((l) => l.startsWith('Exit codes:')),
      )
    : [];
  return [
    'Usage:',
    ...lines,
    'Common options: --journal F (default .logbook/journal.db, or $LOGBOOK_JOURNAL), --json',
    ...crashSpecs,
    'All commands: `logbook --help`.',
  ].join('\n');
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };

function usage(problem: string): LogbookError {
  return new LogbookError(ErrorCodes.USAGE, problem, 'Run `logbook --help` for the commands and their options.');
}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, positionals: number) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, journal: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (err) {
    throw usage(describe(err));
  }
  if (parsed.positionals.length !== positionals) {
    throw usage(
      `Expected ${positionals} argument(s), got ${parsed.positionals.length}${parsed.positionals.length ? ` (${parsed.positionals.join(' ')})` : ''}.`,
    );
  }
  return parsed;
}

/**
 * Arms --crash-at specs; with $LOGBOOK_TRACE_FAULTS set, also appends every fault point hit to that file (JSON lines),
 * and with $LOGBOOK_CRASH_NOTE set, writes an armed crash's last words there (JSON: the spec, and the call it leaves
 * uncounted): a rehearsal adds that call to the journal's count of its action.
 */
function faultsFrom(specs: unknown, runId: string): Faults {
  const list = Array.isArray(specs) ? (specs as string[]) : [];
  const traceFile = process.env.LOGBOOK_TRACE_FAULTS;
  const noteFile = process.env.LOGBOOK_CRASH_NOTE;
  // appendFileSync: a trace line must be on disk before an armed crash at the same point kills the process.
  const trace = traceFile ? (hit: FaultHit): void => fs.appendFileSync(traceFile, `${JSON.stringify(hit)}\n`) : undefined;
  // Synchronous writes (fd 2, the note): the kill follows at once, and a buffered write would be lost with the process.
  const announce = (spec: CrashSpec, uncounted: string | undefined): void => {
    // The note is the rehearsal's (a scratch file); the id is masked as every line the CLI prints is.
    if (noteFile) {
      const words = { spec: formatCrashSpec(spec), ...(uncounted ? { uncounted: SecretMask.ofEnv(process.env, []).text(uncounted) } : {}) };
      fs.writeFileSync(noteFile, JSON.stringify(words));
    }
    fs.writeSync(
      2,
      `logbook: --crash-at ${formatCrashSpec(spec)} reached in run ${runId}: killing this process with SIGKILL now (a simulated crash: nothing is flushed or cleaned up). See what it left with \`logbook show ${runId}\`; continue with \`logbook resume ${runId}\`.\n`,
    );
  };
  return new Faults(list.map(parseCrashSpec), trace, announce);
}

/** Refuses crash specs naming an action type the loaded script does not define, before anything runs. */
function checkTargets(faults: Faults): void {
  checkCrashTargets(faults.specs, [...actionRegistry().keys()], runTimeActionTypePrefixes());
}

/** Armed crash points a run ended without reaching: said at the end, so a typo'd step name is not silent. */
function reportUnreached(io: Io, faults: Faults): string[] {
  const missed = unreachedCrashPoints(faults);
  for (const m of missed) io.err(`${paint('yellow', 'warning')} ${m}`);
  return missed;
}

/**
 * The --decide options in order, each with the --result that follows it: `--decide <id>=happened --result JSON` gives
 * the result the effect had (what run.do, or the model, gets). Checked here, before the journal is opened.
 */
function parseDecisions(tokens: ReadonlyArray<{ kind: string; name?: string; value?: string | undefined }> | undefined): Record<string, DecisionInput> {
  const out: Record<string, DecisionInput> = {};
  let last: { id: string; decision: Decision; withResult: boolean } | undefined;
  for (const t of tokens ?? []) {
    if (t.kind !== 'option') continue;
    if (t.name === 'decide') {
      const d = t.value ?? '';
      const i = d.lastIndexOf('=');
      const id = d.slice(0, i);
      const v = d.slice(i + 1);
      if (i <= 0 || (v !== 'happened' && v !== 'not-happened')) {
        throw new LogbookError(
          ErrorCodes.BAD_DECISION,
          `--decide ${JSON.stringify(d)} is not <action-id>=happened|not-happened.`,
          'Write e.g. --decide email:run-1:bob@example.com=happened.',
        );
      }
      out[id] = v;
      last = { id, decision: v, withResult: false };
    } else if (t.name === 'result') {
      if (!last || last.withResult)
        throw usage('--result gives the result of the --decide <action-id>=happened right before it; this one follows no such --decide.');
      if (last.decision !== 'happened')
        throw usage(`--result follows --decide ${last.id}=not-happened: an effect that did not happen has no result. Decide =happened, or leave --result out.`);
      let result: unknown;
      try {
        result = JSON.parse(t.value ?? '') as unknown;
      } catch (err) {
        throw new LogbookError(
          ErrorCodes.USAGE,
          `--result for ${last.id} is not valid JSON: ${describe(err)}. Nothing was written.`,
          `Give the result the effect had as JSON, quoted for the shell, e.g. --decide ${last.id}=happened --result '{"chargeId": "ch_123"}'.`,
        );
      }
      out[last.id] = { decision: 'happened', result };
      last.withResult = true;
    }
  }
  return out;
}

function readInput(values: { input?: unknown; 'input-file'?: unknown }): unknown {
  if (values.input !== undefined && values['input-file'] !== undefined) throw usage('Pass either --input or --input-file, not both.');
  let text: string | undefined;
  let from = '--input';
  if (typeof values['input-file'] === 'string') {
    from = values['input-file'];
    try {
      text = fs.readFileSync(values['input-file'], 'utf8');
    } catch (err) {
      throw new LogbookError(ErrorCodes.INVALID_INPUT, `Cannot read the input file ${values['input-file']}: ${describe(err)}.`, 'Check the path.');
    }
  } else if (typeof values.input === 'string') text = values.input;
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.INVALID_INPUT,
      `${from} is not valid JSON: ${describe(err)}.`,
      `Quote it for the shell, e.g. --input '{"recipients": 50}'.`,
    );
  }
}

function withStore<T>(db: string, fn: (s: Store) => Promise<T>): Promise<T> {
  const store = openStore(db);
  return fn(store).finally(() => store.close());
}

/** The policy's exit code for a run's status: the debugger's session ends with the same. */
export function outcomeExit(status: RunStatus): number {
  return runExitCode(status);
}

/**
 * A run stopped by its journal failing exits 5 (EXIT.storage), whatever status it was left in; one whose lease this
 * process lost exits 4 (EXIT.busy), as when it is refused for being held.
 */
function runExit(o: { readonly status: RunStatus; readonly error?: { readonly code?: string } }): number {
  if (o.error?.code === ErrorCodes.LEASE_LOST) return EXIT.busy;
  return o.error?.code !== undefined && isStorageCode(o.error.code) ? EXIT.storage : outcomeExit(o.status);
}

function printOutcome(io: Io, o: RunOutcome, json: boolean, faults?: Faults): number {
  const crashAtNotReached = faults ? reportUnreached(io, faults) : [];
  if (json) {
    io.out(JSON.stringify(crashAtNotReached.length ? { ...o, crashAtNotReached } : o, null, 2));
    return runExit(o);
  }
  const s = o.stats;
  io.out(`${paint('bold', o.runId)}  ${o.agent}  ${runStatusWord(o.status)}  (attempt ${o.attempt})`);
  io.out(`  steps    ${s.stepsReplayed} replayed, ${s.stepsRedone} redone, ${s.stepsRun} run`);
  const reconciled = s.reconciled.map((r) => `${r.type} ${r.id}: ${r.outcome}`);
  io.out(
    `  actions  ${s.actionsSkipped} skipped (already committed), ${s.reconciled.length} reconciled, ${s.actionsExecuted} executed${s.actionsObserved ? `, ${s.actionsObserved} read-only` : ''}`,
  );
  for (const r of reconciled) io.out(`           reconciled ${r}`);
  for (const w of s.warnings) io.out(paint('yellow', `  warning  ${w}`));
  if (o.status === 'completed') io.out(`  output   ${JSON.stringify(o.output)}`);
  if (o.error) io.out(paint('red', `  error    ${o.error.code ? `[${o.error.code}] ` : ''}${o.error.message}`));
  if (o.compensation) printCompensation(io, o.compensation, false);
  if (o.waitingOn) io.out(paint('yellow', `  waiting  ${o.waitingOn.reason}`));
  // A stop of its child (run.child): the person acts on the child, then the parent goes on with its output.
  const where = o.waitingOn?.runId ?? o.runId;
  const then = o.waitingOn?.runId ? `; then: logbook resume ${o.runId}` : '';
  if (o.status === 'needs-decision' && o.waitingOn)
    io.out(`  next     logbook resume ${where} --decide ${o.waitingOn.actionId}=happened|not-happened [--result JSON]${then}`);
  if (o.status === 'awaiting-approval' && o.waitingOn) io.out(`  next     logbook approve ${where} ${o.waitingOn.actionId}   (or reject)${then}`);
  if (o.status === 'waiting' && o.waitingFor) {
    const until = o.waitingFor.until === null ? 'no timeout' : `until ${new Date(o.waitingFor.until).toISOString()}, then the wait times out`;
    const kid = o.waitingFor.runId;
    const whose = kid === undefined ? '' : ` in its child run ${kid}`;
    io.out(paint('yellow', `  waiting  for event ${JSON.stringify(o.waitingFor.event)}${whose} (${until}); no process holds the run`));
    io.out(
      `  next     logbook send ${kid ?? o.runId} ${shellWord(o.waitingFor.event)} --data JSON${kid === undefined ? '' : `   (it continues ${o.runId} too)`}`,
    );
  }
  for (const d of s.leftInDoubt)
    io.out(paint('yellow', `  in doubt ${d.type} ${d.id}: execute threw (${d.error}), which does not prove nothing happened; the next resume reconciles it`));
  if (o.status === 'failed') io.out(`  next     fix the cause, then: logbook resume ${o.runId}   (or: logbook compensate ${o.runId})`);
  if (runExit(o) === EXIT.storage) io.out(`  next     fix the journal's storage as the error says, then: logbook resume ${o.runId}`);
  return runExit(o);
}

function printCompensation(io: Io, r: CompensationReport, json: boolean): number {
  if (json) {
    io.out(JSON.stringify(r, null, 2));
    return outcomeExit(r.status);
  }
  io.out(
    `  compensation  ${runStatusWord(r.status)}: ${r.compensated.length} inverse(s) applied${r.alreadyCompensated ? `, ${r.alreadyCompensated} already applied earlier` : ''}, ${r.irreversible.length} irreversible`,
  );
  for (const c of r.compensated) io.out(`    undone        ${c.type} ${c.id}${c.redone ? ' (its inverse was in doubt; ran again with the same key)' : ''}`);
  for (const i of r.irreversible) io.out(paint('red', `    irreversible  ${i.type} ${i.id} (no compensate defined: handle it by hand)`));
  for (const s of r.settled) io.out(`    settled       ${s.type} ${s.id}: ${s.outcome}`);
  for (const c of r.children ?? [])
    io.out(`    child run     ${c.runId} (${c.agent}): ${runStatusWord(c.status)}${c.compensated ? `, ${c.compensated} inverse(s) applied` : ''}`);
  if (r.waitingOn) io.out(paint('yellow', `    waiting       ${r.waitingOn.reason}`));
  if (r.error) io.out(paint('red', `    error         ${r.error.message}`));
  return outcomeExit(r.status);
}

/** The agent that drives run `runId`: the script's default one, or one it imports (a child run journals its parent's script). */
async function agentFor(store: Store, runId: string, override: unknown): Promise<AgentDefinition> {
  const script = await scriptFor(store, runId, override);
  return agentNamed(script, store.reader.run(runId)?.agent ?? script.agent.name);
}

async function scriptFor(store: Store, runId: string, override: unknown): ReturnType<typeof loadScript> {
  if (typeof override === 'string') return loadScript(override);
  const row = store.reader.run(runId);
  if (!row)
    throw new LogbookError(ErrorCodes.RUN_NOT_FOUND, `There is no run ${runId} in ${store.target}.`, 'List runs with `logbook ls` (and check --journal).');
  return loadScript(row.script);
}

/**
 * Loads the run's script for its side effect alone: importing it defines its actions (with their inverses) in the
 * process-wide action registry (runtime/define.ts), where compensateRun looks them up. Its run() is not called.
 */
async function defineActionsOf(store: Store, runId: string, override: unknown): Promise<void> {
  await scriptFor(store, runId, override);
}

const crashOpt = { 'crash-at': { type: 'string', multiple: true } } as const;

/** The shared arguments of commands that drive an existing run (resume, compensate). */
function parseRunTarget(rest: string[]) {
  const { values, positionals, tokens } = parse(
    rest,
    {
      decide: { type: 'string', multiple: true },
      result: { type: 'string', multiple: true },
      script: { type: 'string' },
      now: { type: 'boolean' },
      ...crashOpt,
    },
    1,
  );
  const db = dbPath(values.journal);
  setStateDir(db);
  return {
    db,
    runId: positionals[0] ?? '',
    decisions: parseDecisions(tokens),
    faults: faultsFrom(values['crash-at'], positionals[0] ?? ''),
    script: values.script,
    json: values.json === true,
    now: values.now === true,
  };
}

/**
 * Every line the CLI prints, masked: the environment's secrets and the password of a --journal URL, in any form (a run's
 * args or an error quoting them). The script's own console output is its own and is not filtered.
 */
function maskedIo(io: Io, argv: readonly string[]): Io {
  const db = journalFlagValue(argv);
  const mask = (line: string): string => SecretMask.ofEnv(process.env, db ? urlSecrets(db) : []).text(line);
  return { out: (l) => io.out(mask(l)), err: (l) => io.err(mask(l)) };
}

export async function main(given: string[], plainIo: Io = defaultIo): Promise<number> {
  const argv = currentJournalFlag(given, (l) => plainIo.err(l));
  const io = maskedIo(plainIo, argv);
  const [command, ...rest] = argv;
  try {
    if (journalFlagCount(argv) > 1)
      throw usage('The journal is named more than once (--journal, or its old name --db): which one was meant is not clear. Pass --journal once.');
    const help = command === undefined ? undefined : commandHelp(command, rest);
    if (help !== undefined) {
      io.out(help);
      return EXIT.ok;
    }
    switch (command) {
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        io.out(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      case 'run': {
        const { values, positionals } = parse(
          rest,
          { input: { type: 'string' }, 'input-file': { type: 'string' }, 'run-id': { type: 'string' }, detach: { type: 'boolean' }, ...crashOpt },
          1,
        );
        const db = dbPath(values.journal);
        setStateDir(db);
        const input = readInput(values);
        const runId = values['run-id'] ?? newRunId();
        if (values.detach) {
          if (values['crash-at'] !== undefined)
            throw usage('--crash-at arms this process, and a detached run runs in a worker: pass --crash-at to `logbook worker` instead.');
          const script = await loadScript(positionals[0] ?? '');
          return await withStore(db, (store) => detachRun(store, script, input, runId, io, values.json === true));
        }
        const faults = faultsFrom(values['crash-at'], runId);
        const script = await loadScript(positionals[0] ?? '');
        checkTargets(faults);
        const outcome = await withStore(db, (store) =>
          startRun(store, script.agent, { script: script.path, scriptVersion: script.version, input, faults, runId, ...traceContextOpt() }),
        );
        return printOutcome(io, outcome, values.json === true, faults);
      }
      case 'resume': {
        const t = parseRunTarget(rest);
        return await withStore(t.db, async (store) => {
          const agent = await agentFor(store, t.runId, t.script);
          checkTargets(t.faults);
          const sleep = t.now ? { sleep: { wakeNow: true } } : {};
          return printOutcome(io, await resumeRun(store, agent, t.runId, { decisions: t.decisions, faults: t.faults, ...sleep }), t.json, t.faults);
        });
      }
      case 'compensate': {
        const t = parseRunTarget(rest);
        return await withStore(t.db, async (store) => {
          await defineActionsOf(store, t.runId, t.script);
          checkTargets(t.faults);
          const report = await compensateRun(store, t.runId, { decisions: t.decisions, faults: t.faults });
          reportUnreached(io, t.faults);
          if (!t.json) io.out(`${paint('bold', t.runId)}`);
          return printCompensation(io, report, t.json);
        });
      }
      case 'approve':
      case 'reject': {
        const { values, positionals } = parse(rest, { note: { type: 'string' }, 'no-resume': { type: 'boolean' }, script: { type: 'string' }, ...crashOpt }, 2);
        const db = dbPath(values.journal);
        setStateDir(db);
        const [runId = '', actionId = ''] = positionals;
        return await withStore(db, async (store) => {
          const faults = faultsFrom(values['crash-at'], runId);
          // The script is loaded (and the crash targets checked) before the decision is written.
          const agent = values['no-resume'] ? undefined : await agentFor(store, runId, values.script);
          if (agent) checkTargets(faults);
          recordApproval(store, runId, actionId, command === 'approve', values.note ?? null);
          if (!values.json) io.out(`${command === 'approve' ? 'approved' : 'rejected'} ${actionId} in run ${runId}`);
          if (!agent) return EXIT.ok;
          const c = await continueRun(store, () => agent, runId, { faults, stillThere: () => store.reader.run(runId)?.status === 'awaiting-approval' });
          if (c.how === 'resumed') return printOutcome(io, c.outcome, values.json === true, faults);
          // A racing resume or a worker took the run: its session takes the decision at the gate, or already did.
          if (values.json)
            io.out(
              JSON.stringify({ runId, actionId, decision: command, ...continuedJson(c), ...(c.how === 'not-waiting' ? { status: c.status } : {}) }, null, 2),
            );
          else io.out(continuedElsewhere(runId, c, 'the decision', 'its gate'));
          return EXIT.ok;
        });
      }
      case 'send': {
        const { values, positionals } = parse(
          rest,
          { data: { type: 'string' }, id: { type: 'string' }, 'no-resume': { type: 'boolean' }, script: { type: 'string' }, ...crashOpt },
          2,
        );
        const db = dbPath(values.journal);
        setStateDir(db);
        const [runId = '', name = ''] = positionals;
        const data = values.data === undefined ? undefined : jsonFlag('--data', values.data, `--data '{"text": "yes"}'`);
        return await withStore(db, async (store) => {
          const faults = faultsFrom(values['crash-at'], runId);
          // The script is loaded (and the crash targets checked) before the event is kept.
          const script = values['no-resume'] ? undefined : await scriptFor(store, runId, values.script);
          if (script) checkTargets(faults);
          const report = sendEvent(store, runId, name, data, {
            ...(values.id !== undefined ? { id: values.id } : {}),
            role: 'cli',
            what: 'logbook send',
            log: (l) => io.err(paint('yellow', l)),
          });
          const json = values.json === true;
          if (!json) io.out(sendReportLine(report));
          const continued =
            script && report.expect !== 'taken' ? await continueAfterSend(store, (name) => agentNamed(script, name), report, { faults }) : undefined;
          return printSent(io, store, report, continued, json, faults);
        });
      }
      case 'ls': {
        const { values } = parse(rest, { limit: { type: 'string' } }, 0);
        const db = dbPath(values.journal);
        const noJournal = (): number => {
          io.out(values.json ? '[]' : `No journal at ${redactUrl(db)} yet. Start a run with \`logbook run <script>\`.`);
          return EXIT.ok;
        };
        if (!isPostgresUrl(db) && !fs.existsSync(db)) return noJournal();
        const limit = values.limit === undefined ? 50 : Number(values.limit);
        if (!Number.isInteger(limit) || limit < 1) throw usage(`--limit ${values.limit ?? ''} is not a positive integer.`);
        let store: Store;
        try {
          store = openStore(db, { readonly: true });
        } catch (err) {
          // A server database no run has migrated yet: as empty as a journal file that does not exist.
          if (isPostgresUrl(db) && err instanceof LogbookError && err.code === ErrorCodes.DB_OPEN_FAILED) return noJournal();
          throw err;
        }
        const damage: Damage = [];
        try {
          io.out(listRuns(store, values.json === true, limit, damage));
        } finally {
          store.close();
        }
        // The list is still given; a run with a damaged value is named on stderr (`logbook show` says which value).
        for (const e of damage) io.err(`${paint('yellow', 'warning')} [${e.code}] ${e.message}`);
        return EXIT.ok;
      }
      case 'show': {
        const { values, positionals } = parse(rest, {}, 1);
        const store = openStore(dbPath(values.journal), { readonly: true });
        const damage: Damage = [];
        try {
          io.out(showRun(store, positionals[0] ?? '', values.json === true, damage));
        } finally {
          store.close();
        }
        // Shown with the damage marked; the command still fails as the journal error it is.
        const first = damage[0];
        if (first) {
          io.err(
            `${paint('red', 'error')} [${first.code}] ${first.message}${damage.length > 1 ? ` (${damage.length - 1} more damaged value(s) listed above)` : ''}`,
          );
          return exitCodeOf(first.code);
        }
        return EXIT.ok;
      }
      default: {
        const cmd = COMMAND_MODULES.find((c) => c.name === command);
        if (cmd) return await cmd.run(rest, io);
        throw usage(`Unknown command ${JSON.stringify(command)}.`);
      }
    }
  } catch (err) {
    // Raw SQLite failures (not fs errors of other files) reaching here are the journal's.
    const storage = isStorageError(err)
      ? err
      : err instanceof Error && err.name === 'SqliteError'
        ? storageError(err, 'the journal', 'using the journal')
        : undefined;
    if (storage) {
      io.err(`${paint('red', 'error')} [${storage.code}] ${storage.message}`);
      return EXIT.storage;
    }
    if (err instanceof LogbookError) {
      io.err(`${paint('red', 'error')} [${err.code}] ${err.message}`);
      return exitCodeOf(err.code);
    }
    io.err(`${paint('red', 'internal error')} ${err instanceof Error ? (err.stack ?? err.message) : describe(err)}`);
    return EXIT.failed;
  }
}

/** A flag's JSON value, or LB_USAGE saying so (nothing written). */
function jsonFlag(flag: string, text: string, example: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new LogbookError(ErrorCodes.USAGE, `${flag} is not valid JSON: ${describe(err)}. Nothing was written.`, `Quote it for the shell, e.g. ${example}.`);
  }
}

/** A word as a shell reads it back: quoted only when it needs to be. */
function shellWord(s: string): string {
  return /^[\w.:@/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What `logbook send` did after its report line: the run it continued (its outcome), or who continues it. */
function printSent(io: Io, store: Store, r: SendReport, c: Continued | undefined, json: boolean, faults: Faults): number {
  const fate = store.reader.inbox.byId(r.runId, r.id);
  const event = fate ? { status: fate.status, step: fate.step_idx, ...(fate.error ? { error: JSON.parse(fate.error) as unknown } : {}) } : undefined;
  if (json) {
    io.out(
      JSON.stringify({ ...r, ...(c ? continuedJson(c) : {}), ...(c?.how === 'resumed' ? { outcome: c.outcome } : {}), ...(event ? { event } : {}) }, null, 2),
    );
    return c?.how === 'resumed' ? runExit(c.outcome) : EXIT.ok;
  }
  if (c?.how === 'held' || (c?.how === 'not-waiting' && r.expect === 'waiting-now')) io.out(continuedElsewhere(r.runId, c, 'the event', 'its wait'));
  if (c?.how !== 'resumed') return EXIT.ok;
  const code = printOutcome(io, c.outcome, false, faults);
  if (event?.status === 'delivered') io.out(`  event    ${JSON.stringify(r.name)} delivered to the wait at step #${(event.step ?? 0) + 1}`);
  if (event?.status === 'refused') io.out(paint('yellow', `  event    ${JSON.stringify(r.name)} refused by the wait's schema: ${JSON.stringify(event.error)}`));
  return code;
}

/** How a command that gave a run what it waited for continued it, in --json: and who holds it, when another session does. */
function continuedJson(c: Continued): { continued: Continued['how']; owner?: string | null } {
  return c.how === 'held' ? { continued: c.how, owner: c.owner } : { continued: c.how };
}

/** Who continues a run another driver took after this command gave it what it waited for (`what`, taken at `where`). */
function continuedElsewhere(runId: string, c: Exclude<Continued, { how: 'resumed' }>, what: string, where: string): string {
  return c.how === 'held'
    ? `  the session that holds run ${runId} (${c.owner ?? 'another process'}) takes ${what} at ${where}`
    : `  run ${runId} is ${c.status} now: another process took it on first (${what} is kept in its journal)`;
}

/** The caller's W3C trace context (TRACEPARENT / TRACESTATE), journaled with a new run so its spans join that trace. */
function traceContextOpt(): { traceContext?: CallerContext } {
  const traceContext = callerContextFromEnv(process.env);
  return traceContext ? { traceContext } : {};
}
