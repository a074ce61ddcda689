// `logbook worker`: loads a folder of agent scripts and drives the runs it claims (queued, or whose lease expired).

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agentNamed, loadScript, type LoadedScript } from '../loader/loadScript';
import { EXIT, ErrorCodes, LogbookError, describe } from '../runtime/errors';
import { driveClaimed } from '../runtime/engine';
import { endSession, openStore, processOwner, withNewSession, type Claimed, type Known, type Store } from '../runtime/store';
import { exitWithRunsReleased } from '../runtime/processGuard';
import { Faults, parseCrashSpec } from '../runtime/faults';
import { dbPath, setStateDir, type CommandModule, type Io } from './journalOption';
import { parseCommandArgs } from './commandArgs';

const SCRIPT_EXT = /\.(ts|mts|cts|js|mjs|cjs)$/;

function usage(problem: string): LogbookError {
  return new LogbookError(ErrorCodes.USAGE, problem, "Run `logbook --help` for the worker's options.");
}

function positiveInt(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw usage(`--${flag} ${v} is not a positive integer.`);
  return n;
}

/** Every agent script in the folder (not its subfolders); files without a default agent are helpers, and skipped. */
async function loadFolder(dir: string, only: readonly string[] | undefined, io: Io): Promise<Map<string, LoadedScript>> {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) {
    throw new LogbookError(ErrorCodes.SCRIPT_NOT_FOUND, `--scripts ${abs} is not a folder.`, 'Pass the folder that holds your agent scripts.', { script: abs });
  }
  const agents = new Map<string, LoadedScript>();
  for (const f of fs.readdirSync(abs).sort()) {
    if (!SCRIPT_EXT.test(f) || f.endsWith('.d.ts')) continue;
    let s: LoadedScript;
    try {
      s = await loadScript(path.join(abs, f));
    } catch (err) {
      if (err instanceof LogbookError && err.code === ErrorCodes.NO_DEFAULT_AGENT) continue;
      throw err;
    }
    const seen = agents.get(s.agent.name);
    if (seen) {
      throw new LogbookError(
        ErrorCodes.INVALID_DEFINITION,
        `Two scripts in ${abs} define agent ${JSON.stringify(s.agent.name)}: ${path.basename(seen.path)} and ${f}.`,
        "Run one version of an agent per worker: move the other script to another worker's folder.",
      );
    }
    agents.set(s.agent.name, s);
  }
  if (only) {
    const missing = only.filter((a) => !agents.has(a));
    if (missing.length > 0)
      throw usage(`--agents names ${missing.join(', ')}, which no script in ${abs} defines (found: ${[...agents.keys()].join(', ') || 'none'}).`);
    for (const name of [...agents.keys()]) if (!only.includes(name)) agents.delete(name);
  }
  if (agents.size === 0)
    throw new LogbookError(ErrorCodes.SCRIPT_NOT_FOUND, `No agent script in ${abs}.`, 'Put scripts with `export default defineAgent(...)` in that folder.', {
      script: abs,
    });
  for (const s of agents.values()) io.out(`worker: has ${s.agent.name} ${s.version.slice(0, 8)} (${path.basename(s.path)})`);
  return agents;
}

/** A run released in run.waitFor: which event, until when (the worker claims it again when it comes, or then). */
function waitingWords(o: object): string {
  const w = 'waitingFor' in o ? (o.waitingFor as { event: string; until: number | null; runId?: string } | undefined) : undefined;
  if (!w) return '';
  return ` for event ${JSON.stringify(w.event)}${w.runId === undefined ? '' : ` of child run ${w.runId}`}${w.until === null ? '' : ` until ${new Date(w.until).toISOString()}`} (lease released)`;
}

interface InFlight {
  readonly claimed: Claimed;
  readonly done: Promise<void>;
}

export interface WorkerOptions {
  readonly name: string;
  readonly concurrency: number;
  readonly pollMs: number;
  readonly graceMs: number;
  readonly faults: Faults;
}

/** The claim loop: at most `concurrency` runs at once; on SIGTERM it stops claiming, waits out the grace, releases the rest. */
export async function runWorker(store: Store, agents: Map<string, LoadedScript>, o: WorkerOptions, io: Io): Promise<number> {
  const role = `worker ${o.name}`;
  // The worker's identity for `ls`; each claim is a driving session of its own, with its own lease token.
  const owner = processOwner(role);
  // Each script's own agent, and the agents it starts with run.child: a child run journals its parent's script and
  // version, so a worker with that script takes the child over too (once its parent's process is gone).
  const known: Known[] = [...agents.values()].flatMap((s) => [...s.agents.keys()].map((agent) => ({ agent, version: s.version })));
  const byVersion = new Map([...agents.values()].map((s) => [s.version, s]));
  const info = {
    name: o.name,
    owner: owner.label,
    host: owner.host,
    pid: owner.pid,
    agents: [...agents.values()].map((s) => ({ agent: s.agent.name, version: s.version, script: s.path })),
  };
  store.recordWorker(info);
  const seen = setInterval(() => {
    try {
      store.recordWorker(info);
    } catch {
      // Only `ls`'s explanations depend on it; the claim loop reports a journal that fails.
    }
  }, 5_000);
  seen.unref();

  const inFlight = new Map<string, InFlight>();
  /** Runs found with a damaged journal: given back untouched beyond the claim, and not claimed again by this worker. */
  const damaged = new Set<string>();
  let stopping = false;
  let wake: () => void = () => undefined;
  const nap = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    io.out(`worker: ${signal}: claiming no more; ${inFlight.size} run(s) in flight get ${o.graceMs / 1000} s to finish`);
    wake();
  };
  const onTerm = (): void => stop('SIGTERM');
  const onInt = (): void => stop('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  io.out(`worker: ${owner.label} claims runs of ${known.map((k) => `${k.agent} ${k.version.slice(0, 8)}`).join(', ')} (concurrency ${o.concurrency})`);

  const start = (claimed: Claimed): void => {
    const script = byVersion.get(claimed.row.script_version ?? '') ?? agents.get(claimed.row.agent);
    const { runId, epoch } = claimed.lease;
    io.out(`worker: claimed ${runId} to ${claimed.kind} (epoch ${epoch}, attempt ${claimed.lease.attempt})`);
    const done = (async () => {
      if (!script) throw new Error(`claimed ${runId} of an agent this worker does not have`);
      const outcome = await driveClaimed(store, agentNamed(script, claimed.row.agent), claimed, {
        faults: o.faults,
        role,
        log: (l) => io.err(l),
        sleep: { releaseOverMs: sleepReleaseMs() },
      });
      // The error's own words say what this worker did and did not do after the loss, naming any execute still running.
      if (outcome.error?.code === ErrorCodes.LEASE_LOST) io.out(`worker: ${runId} lost its lease: ${outcome.error.message}`);
      else if (outcome.error?.code === ErrorCodes.JOURNAL_INVALID) {
        damaged.add(runId);
        io.out(`worker: ${runId} has a damaged journal; given back, and this worker does not claim it again: [${outcome.error.code}] ${outcome.error.message}`);
      } else
        io.out(
          `worker: ${runId} ${outcome.status}${'wakeAt' in outcome && outcome.wakeAt !== undefined ? ` until ${new Date(outcome.wakeAt).toISOString()} (lease released)` : ''}${waitingWords(outcome)}${outcome.error ? `: [${outcome.error.code ?? outcome.error.name}] ${outcome.error.message}` : ''}`,
        );
    })()
      .catch((err: unknown) => io.err(`worker: ${runId} stopped: ${describe(err)}`))
      .finally(() => {
        endSession(claimed.lease.token);
        inFlight.delete(runId);
        wake();
      });
    inFlight.set(runId, { claimed, done });
  };

  let unreachable = false;
  try {
    while (!stopping) {
      if (inFlight.size >= o.concurrency) {
        await Promise.race([nap(o.pollMs * 10), ...[...inFlight.values()].map((f) => f.done)]);
        continue;
      }
      let claimed: Claimed | undefined;
      try {
        // Never the runs in flight here: one given back (a damaged journal) is not taken again before its outcome is in.
        claimed = withNewSession(role, (session) => store.claimRun(session, known, { skip: new Set([...damaged, ...inFlight.keys()]) }));
        if (unreachable) io.err('worker: the journal answers again; claiming');
        unreachable = false;
      } catch (err) {
        // Said once per outage (a server restarting refuses every poll until it is up), then retried quietly.
        if (!unreachable) io.err(`worker: claiming failed; trying again every ${o.pollMs} ms until the journal answers: ${describe(err)}`);
        unreachable = true;
        await nap(o.pollMs);
        continue;
      }
      if (claimed) start(claimed);
      else await nap(o.pollMs);
    }
    const graceOver = Symbol('grace');
    let timer: NodeJS.Timeout | undefined;
    const over = await Promise.race([
      Promise.all([...inFlight.values()].map((f) => f.done)).then(() => undefined),
      new Promise<symbol>((resolve) => {
        timer = setTimeout(() => resolve(graceOver), o.graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (over === graceOver) {
      for (const f of inFlight.values()) {
        const given = store.releaseLease(f.claimed.lease);
        endSession(f.claimed.lease.token);
        io.out(`worker: ${f.claimed.lease.runId} ${given ? 'released: it stays resumable, and another worker takes it' : 'was already taken over'}`);
      }
    }
  } finally {
    clearInterval(seen);
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    try {
      store.forgetWorker(o.name, owner.label);
    } catch {
      // Its row ages out of `ls` by itself.
    }
  }
  io.out('worker: stopped');
  // In-flight effects whose leases were given back are abandoned: their runs' next holder reconciles them.
  return inFlight.size > 0 ? exitAfterRelease(store) : EXIT.ok;
}

function exitAfterRelease(store: Store): never {
  store.close();
  return exitWithRunsReleased(EXIT.ok);
}

export const workerCommand: CommandModule = {
  name: 'worker',
  usage: 'logbook worker --scripts <folder> [--journal F] [--concurrency N] [--agents a,b] [--name N] [--grace SECONDS] [--poll-ms N] [--crash-at SPEC]...',
  async run(args, io) {
    const values = parseCommandArgs(
      args,
      {
        journal: { type: 'string' },
        scripts: { type: 'string' },
        concurrency: { type: 'string' },
        agents: { type: 'string' },
        name: { type: 'string' },
        grace: { type: 'string' },
        'poll-ms': { type: 'string' },
        'crash-at': { type: 'string', multiple: true },
      },
      "Run `logbook --help` for the worker's options.",
      false,
    ).values;
    if (values.scripts === undefined) throw usage('logbook worker needs --scripts <folder with agent scripts>.');
    const only = values.agents
      ?.split(',')
      .map((a) => a.trim())
      .filter((a) => a.length > 0);
    const db = dbPath(values.journal);
    setStateDir(db);
    const opts: WorkerOptions = {
      name: values.name ?? `${os.hostname()}-${process.pid}`,
      concurrency: positiveInt('concurrency', values.concurrency, 4),
      pollMs: positiveInt('poll-ms', values['poll-ms'], 500),
      graceMs: positiveInt('grace', values.grace, 30) * 1000,
      faults: new Faults((values['crash-at'] ?? []).map(parseCrashSpec)),
    };
    const agents = await loadFolder(values.scripts, only, io);
    const store = openStore(db);
    try {
      return await runWorker(store, agents, opts, io);
    } finally {
      store.close();
    }
  },
};

/** A sleep with more than this left releases its run ($LOGBOOK_SLEEP_RELEASE_MS, default 30 s): a worker holds no lease through it. */
function sleepReleaseMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.LOGBOOK_SLEEP_RELEASE_MS);
  return Number.isInteger(n) && n >= 0 ? n : 30_000;
}
