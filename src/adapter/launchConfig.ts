// The `logbook` launch configuration: its zod schema (source of package.json's JSON Schema) and its resolution.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';
import { parseCrashSpec } from '../runtime/faults';
import { ENGLISH } from '../shared/zodEnglish';
import { readEnvFile } from './envFile';
import { journalTargetProblem, resolveTarget } from '../shared/journalTarget';
import { JOURNAL, LEGACY_JOURNAL, deprecationLine, journalEnvEntry } from '../shared/journalNames';
import type { RunnerConfig } from '../link/runnerProtocol';

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const DECISION = z.enum(['happened', 'not-happened']);
const nonEmpty = (): z.ZodMiniString<string> => z.string().check(z.minLength(1));
const DEPRECATED_DATABASE = 'Deprecated: the old name of "journal" (same meaning). Rename it to "journal".';

// Each description sits on the attribute's outermost schema: attributeHelp reads it there, and so does the JSON Schema.
export const LaunchConfig = z.object({
  program: nonEmpty().check(z.describe('The agent script to run (TypeScript or JavaScript), absolute or relative to cwd.')),
  input: z.optional(z.unknown()).check(z.describe("The run input as JSON, validated by the agent's input schema. Not with inputFile or resume.")),
  inputFile: z.optional(nonEmpty()).check(z.describe('A JSON file holding the run input, relative to cwd. Not with input or resume.')),
  runId: z
    .optional(z.string().check(z.regex(RUN_ID, 'a run id uses letters, digits and . _ : - (up to 128), starting with a letter or digit')))
    .check(z.describe('The id of the new run (default: generated). With compensate: true, the run to compensate.')),
  resume: z.optional(nonEmpty()).check(z.describe('Resume this run instead of starting one: a run id, or "latest" (the newest run of this agent).')),
  compensate: z
    .optional(z.union([z.boolean(), nonEmpty()]))
    .check(z.describe('Step through the compensation of a run (its inverses, newest-first): a run id, "latest", or true with resume/runId naming the run.')),
  journal: z
    .optional(nonEmpty())
    .check(
      z.describe(
        'The journal: a SQLite file, or postgres://user@host:port/database without a password (it comes from PGPASSWORD, or from the password the VS Code extension keeps in its secret storage). Default: $LOGBOOK_JOURNAL, else .logbook/journal.db under cwd.',
      ),
    ),
  database: z.optional(nonEmpty()).check(z.describe(DEPRECATED_DATABASE)),
  cwd: z.optional(nonEmpty()).check(z.describe('The working directory of the run (default: the directory the debug adapter started in).')),
  env: z.optional(z.record(z.string(), z.string())).check(z.describe("Environment variables added to the run's process (they override envFile).")),
  envFile: z
    .optional(nonEmpty())
    .check(
      z.describe(
        "A .env file (KEY=VALUE lines) whose variables are added to the run's process, relative to cwd. The values of secret-named variables (*_KEY, *_TOKEN, *SECRET*, *PASSWORD*, …) are masked wherever the debugger shows a value.",
      ),
    ),
  runtimeExecutable: z._default(nonEmpty(), 'node').check(z.describe('The Node executable that runs the agent (it must be able to load better-sqlite3).')),
  runtimeArgs: z._default(z.array(z.string()), []).check(z.describe('Arguments passed to runtimeExecutable before the runner script.')),
  stopOnEntry: z._default(z.boolean(), false).check(z.describe('Stop before the first step (for a resume: before the replay starts, with what it will do).')),
  stopOnReplay: z._default(z.boolean(), false).check(z.describe('Also stop (at breakpoints and when stepping) in steps replayed from the journal.')),
  crashAt: z
    .optional(z.union([z.string(), z.array(z.string())]))
    .check(z.describe('Crash the run on purpose (SIGKILL) at fault points: <action type or step name>#<n>@<phase>, e.g. email.send#3@after-start.')),
  decide: z
    .optional(z.record(z.string(), DECISION))
    .check(z.describe('Decisions for in-doubt actions without verify, by action id: "happened" or "not-happened" (resume or compensate only).')),
});
export type LaunchConfig = z.infer<typeof LaunchConfig>;

/** The JSON Schema of the launch attributes, shaped for package.json's `configurationAttributes.launch`. */
export function launchJsonSchema(): { type: 'object'; required: string[]; properties: Record<string, unknown> } {
  const js = z.toJSONSchema(LaunchConfig, { io: 'input' }) as { required?: string[]; properties?: Record<string, unknown> };
  const properties = js.properties ?? {};
  // VS Code strikes a deprecated attribute through and shows why; the JSON Schema standard has no such message.
  const old = properties[LEGACY_JOURNAL.launch];
  if (old && typeof old === 'object') properties[LEGACY_JOURNAL.launch] = { ...old, deprecationMessage: DEPRECATED_DATABASE };
  return { type: 'object', required: js.required ?? ['program'], properties };
}

export interface ResolvedLaunch {
  readonly runner: RunnerConfig;
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly runtimeExecutable: string;
  readonly runtimeArgs: string[];
  /** What the configuration still spells the old way (shown once in the Debug Console; the launch goes on). */
  readonly warnings: string[];
}

function bad(problem: string, remedy: string): LogbookError {
  return new LogbookError(ErrorCodes.BAD_LAUNCH_CONFIG, `The launch configuration is invalid: ${problem}.`, remedy);
}

function attributeHelp(name: string): string {
  const shape = LaunchConfig.shape as Record<string, z.ZodMiniType>;
  const schema = shape[name];
  const d = schema && z.globalRegistry.get(schema)?.description;
  return d ? `Fix "${name}" in launch.json: ${d}` : 'Fix the attribute in launch.json.';
}

/** Validates the raw attributes a client sent; a bad one fails naming the attribute and what it expected. */
export function parseLaunchConfig(raw: unknown): LaunchConfig {
  const r = LaunchConfig.safeParse(raw ?? {}, ENGLISH);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const attr = String(issue?.path[0] ?? '');
  const where = issue?.path.length ? `attribute "${issue.path.map(String).join('.')}"` : 'the configuration';
  const message =
    attr === 'program' && issue?.code === 'invalid_type' && issue.message.includes('undefined') ? 'it is required' : (issue?.message ?? 'invalid');
  throw bad(`${where}: ${message}`, attr ? attributeHelp(attr) : 'Pass an object of launch attributes.');
}

function readInputFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw bad(`attribute "inputFile": cannot read ${file} (${describe(err)})`, 'Point inputFile at a JSON file, relative to cwd.');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw bad(`attribute "inputFile": ${file} is not JSON (${describe(err)})`, 'Write the run input as JSON in that file.');
  }
}

/** Turns validated attributes into what the runner needs, resolving paths against cwd. */
export function resolveLaunch(cfg: LaunchConfig, adapterCwd: string, baseEnv: NodeJS.ProcessEnv = process.env): ResolvedLaunch {
  const cwd = path.resolve(adapterCwd, cfg.cwd ?? '.');
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw bad(`attribute "cwd": ${cwd} is not a directory`, attributeHelp('cwd'));
  const program = path.resolve(cwd, cfg.program);
  if (!fs.existsSync(program) || !fs.statSync(program).isFile()) {
    throw new LogbookError(
      ErrorCodes.SCRIPT_NOT_FOUND,
      `The program ${program} does not exist (attribute "program", resolved from cwd ${cwd}).`,
      'Fix "program" in launch.json: the path of the agent script.',
      { script: program },
    );
  }
  const env = { ...(cfg.envFile !== undefined ? readEnvFile(path.resolve(cwd, cfg.envFile), 'attribute "envFile"') : {}), ...cfg.env };
  if (cfg.journal !== undefined && cfg.database !== undefined)
    throw bad('"journal" and its deprecated name "database" are both set', 'Keep "journal" and remove "database".');
  // Where the journal comes from, first named first; only the one used is warned about.
  const inEnv = journalEnvEntry(env);
  const inBase = journalEnvEntry(baseEnv);
  const oldVariable = `$${LEGACY_JOURNAL.env}`;
  const named: { from: string; target: string; warning?: string } =
    cfg.journal !== undefined
      ? { from: 'attribute "journal"', target: cfg.journal }
      : cfg.database !== undefined
        ? { from: 'attribute "database"', target: cfg.database, warning: deprecationLine(`the attribute "${LEGACY_JOURNAL.launch}"`, `"${JOURNAL.launch}"`) }
        : inEnv !== undefined
          ? {
              from: '$LOGBOOK_JOURNAL (or $LOGBOOK_DB) of "env"/"envFile"',
              target: inEnv.value,
              ...(inEnv.deprecated ? { warning: deprecationLine(`${oldVariable} in "env"/"envFile"`, `$${JOURNAL.env}`) } : {}),
            }
          : inBase !== undefined
            ? {
                from: "the environment's $LOGBOOK_JOURNAL (or $LOGBOOK_DB)",
                target: inBase.value,
                ...(inBase.deprecated ? { warning: deprecationLine(oldVariable, `$${JOURNAL.env}`) } : {}),
              }
            : { from: 'the default journal', target: path.join('.logbook', 'journal.db') };
  const warnings = named.warning !== undefined ? [named.warning] : [];
  const target = named.target;
  const targetProblem = journalTargetProblem(target);
  if (targetProblem) throw bad(`${named.from}: ${targetProblem.problem.replace(/\.$/, '')}`, targetProblem.remedy);
  const journal = resolveTarget(target, cwd);
  if (cfg.input !== undefined && cfg.inputFile !== undefined) throw bad('"input" and "inputFile" are both set', 'Keep one of them.');
  const crashAt = cfg.crashAt === undefined ? [] : Array.isArray(cfg.crashAt) ? cfg.crashAt : [cfg.crashAt];
  for (const spec of crashAt) {
    try {
      parseCrashSpec(spec);
    } catch (err) {
      throw bad(`attribute "crashAt": ${describe(err)}`, attributeHelp('crashAt'));
    }
  }
  let job: RunnerConfig['job'];
  if (cfg.compensate !== undefined && cfg.compensate !== false) {
    const runId = typeof cfg.compensate === 'string' ? cfg.compensate : (cfg.resume ?? cfg.runId);
    if (!runId)
      throw bad('attribute "compensate" is true but no run is named', 'Set "compensate" to a run id (or "latest"), or name the run with "resume" or "runId".');
    if (cfg.input !== undefined || cfg.inputFile !== undefined)
      throw bad('"input" is set for a compensation', 'Remove "input": compensation works on the journaled run.');
    job = { kind: 'compensate', runId };
  } else if (cfg.resume !== undefined) {
    if (cfg.runId !== undefined) throw bad('"resume" and "runId" are both set', 'Use "resume" to continue a run, "runId" to name a new one.');
    if (cfg.input !== undefined || cfg.inputFile !== undefined)
      throw bad('"input" is set for a resume', 'Remove "input": a resumed run keeps its journaled input.');
    job = { kind: 'resume', runId: cfg.resume };
  } else {
    if (cfg.decide !== undefined)
      throw bad('"decide" is set for a new run', 'Use "decide" with "resume" or "compensate": it settles in-doubt actions of an existing run.');
    const input = cfg.inputFile !== undefined ? readInputFile(path.resolve(cwd, cfg.inputFile)) : (cfg.input ?? {});
    job = { kind: 'launch', input, ...(cfg.runId !== undefined ? { runId: cfg.runId } : {}) };
  }
  return {
    cwd,
    env,
    runtimeExecutable: cfg.runtimeExecutable,
    runtimeArgs: cfg.runtimeArgs,
    warnings,
    runner: { program, journal, job, stopOnEntry: cfg.stopOnEntry, stopOnReplay: cfg.stopOnReplay, crashAt, decide: cfg.decide ?? {} },
  };
}
