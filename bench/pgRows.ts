// The PostgreSQL rows: bracketed action and step checkpoint against the server's fsync floor, claim-to-first-new-action
// of a recovered run, 4 workers' throughput, and DBOS Transact's step on the same server as a peer.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FsyncFloor } from './floor';
import { fmtUs, median, nowUs } from './measure';
import { errorRow, type Row } from './report';
import { spawnJson } from './children';
import { openStore, type Durability, type Store } from '../src/runtime/store';
import { startRun } from '../src/runtime/engine';
import { claimRun, enqueueRun } from '../src/runtime/store/queue';
import { driveClaimed } from '../src/runtime/engine';
import { withNewSession } from '../src/runtime/store/owner';
import { loadScript } from '../src/loader/loadScript';
import { dbOf } from '../src/runtime/store/db';
import { rawPgBrackets } from './rawV2';

const ROOT = path.resolve(__dirname, '..');
const SECTION = 'PostgreSQL journal and workers';
const AGENT = path.join(__dirname, 'worker-agents', 'deliver.ts');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const DBOS = path.join(__dirname, 'peers', 'dbos.mjs');

interface ServerHandle {
  readonly data: string;
  readonly url: string;
  destroy(): void;
}
interface Harness {
  pgBinDir(): string | undefined;
  startServer(opts: { dir?: string }): Promise<ServerHandle>;
}

export interface PgConfig {
  readonly steps: number;
  readonly rounds: number;
  readonly workerRuns: number;
  readonly peers: boolean;
}

function createDb(url: string, name: string): string {
  const s = openStore(url);
  try {
    dbOf(s.db).exec(`CREATE DATABASE ${name}`);
  } finally {
    s.close();
  }
  return url.replace(/\/[^/]*$/, `/${name}`);
}

/** One run of `steps` steps (with one bracketed action each, or none) on the journal: µs per step. */
async function perStepUs(store: Store, steps: number, actions: boolean, runId: string, durability: Durability = 'full'): Promise<number> {
  const { agent } = await loadScript(AGENT);
  const t0 = nowUs();
  const o = await startRun(store, agent, { script: AGENT, input: { steps, actions }, runId, role: 'bench', durability });
  if (o.status !== 'completed') throw new Error(`bench run ${runId} ended ${o.status}: ${o.error?.message ?? ''}`);
  return (nowUs() - t0) / steps;
}

/** A run killed for real (SIGKILL at its 4th action) by the CLI, then claimed here: µs from the claim to its first new action. */
async function claimToFirstAction(url: string, runId: string): Promise<number> {
  const env = { ...process.env, LOGBOOK_LEASE_TTL_MS: '1000' };
  spawnSync(
    process.execPath,
    [CLI, 'run', AGENT, '--input', '{"steps":8}', '--run-id', runId, '--crash-at', 'bench.deliver#4@before-start', '--journal', url],
    { env, encoding: 'utf8' },
  );
  const { agent, version } = await loadScript(AGENT);
  const store = openStore(url);
  try {
    // The run's lease is measured by the server's clock; wait it out so the claim finds it expired.
    await new Promise((r) => setTimeout(r, 1200));
    const g = globalThis as { __lbFirstExecute?: number };
    g.__lbFirstExecute = undefined;
    const t0 = performance.now();
    const claimed = withNewSession('bench worker', (owner) => claimRun(dbOf(store.db), store.reader, owner, [{ agent: agent.name, version }], 1000));
    if (!claimed || claimed.lease.runId !== runId) throw new Error(`the claim did not find ${runId}`);
    await driveClaimed(store, agent, claimed, { role: 'bench worker', log: () => undefined });
    if (g.__lbFirstExecute === undefined) throw new Error('no new action ran after the claim');
    return (g.__lbFirstExecute - t0) * 1000;
  } finally {
    store.close();
  }
}

/** 4 worker processes drain `n` queued runs (3 actions each): runs per second, from the queueing to the last completion. */
async function workerThroughput(url: string, n: number, dir: string): Promise<{ runsPerS: number; ms: number }> {
  const { agent, version } = await loadScript(AGENT);
  const workers = [0, 1, 2, 3].map((i) =>
    spawn(
      process.execPath,
      [CLI, 'worker', '--scripts', path.dirname(AGENT), '--name', `bench${i}`, '--concurrency', '4', '--poll-ms', '50', '--journal', url],
      { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] },
    ),
  );
  try {
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            let out = '';
            w.stdout?.setEncoding('utf8').on('data', (d: string) => {
              out += d;
              if (out.includes('claims runs of')) resolve();
            });
            w.on('exit', (code) => reject(new Error(`a bench worker exited (${code}) before it claimed: ${out}`)));
          }),
      ),
    );
    const store = openStore(url);
    try {
      const t0 = performance.now();
      dbOf(store.db).transaction(() => {
        for (let i = 0; i < n; i++)
          enqueueRun(dbOf(store.db), store.reader, { id: `tp-${i}`, agent: agent.name, script: AGENT, scriptVersion: version, input: '{"steps":3}' });
      })();
      const done = dbOf(store.db).prepare("SELECT COUNT(*) FROM runs WHERE id LIKE 'tp-%' AND status = 'completed'").pluck();
      for (;;) {
        if ((done.get() as number) >= n) break;
        if (performance.now() - t0 > 300_000) throw new Error('the workers did not finish in 5 minutes');
        await new Promise((r) => setTimeout(r, 20));
      }
      const ms = performance.now() - t0;
      return { runsPerS: (n * 1000) / ms, ms };
    } finally {
      store.close();
    }
  } finally {
    for (const w of workers) w.kill('SIGTERM');
  }
}

export async function pgRows(work: string, cfg: PgConfig, log: (line: string) => void): Promise<Row[]> {
  const harness = (await import(path.join(ROOT, 'scripts', 'pg-server.mjs'))) as Harness;
  if (!harness.pgBinDir()) {
    const note =
      "skipped: no PostgreSQL binaries (initdb) found; install Debian's postgresql (`node scripts/pg-server.mjs ensure` as root) or set LOGBOOK_PG_BIN";
    log(`  PostgreSQL rows ${note}`);
    return [{ id: 'pg', section: SECTION, figure: 'PostgreSQL rows', value: 'not measured', ratio: '—', budget: 'report', verdict: 'info', note }];
  }
  if (!fs.existsSync(path.join(ROOT, 'dist', 'pgThread.js'))) throw new Error('dist/pgThread.js is missing: run `npm run build`');
  const rows: Row[] = [];
  log('  PostgreSQL: starting a private server (fsync=on)…');
  // The harness makes its own folder: the postgres user must be able to reach it (a private work folder is not).
  const server = await harness.startServer({});
  try {
    const floorDir = fs.mkdtempSync(path.join(server.data, 'logbook-floor-'));
    const floor = new FsyncFloor(floorDir);
    const url = createDb(server.url, 'bench');
    const store = openStore(url);
    const F: number[] = [];
    const action: number[] = [];
    const group: number[] = [];
    const step: number[] = [];
    try {
      for (let r = 0; r < cfg.rounds; r++) {
        F.push(floor.sample(50));
        const withActions = await perStepUs(store, cfg.steps, true, `pg-a-${r}`);
        const grouped = await perStepUs(store, cfg.steps, true, `pg-g-${r}`, 'group');
        const bare = await perStepUs(store, cfg.steps, false, `pg-s-${r}`);
        step.push(bare);
        action.push(withActions - bare);
        group.push(grouped - bare);
        log(`  PostgreSQL round ${r + 1}/${cfg.rounds}: F ${fmtUs(F[r] ?? NaN)}, action ${fmtUs(action[r] ?? NaN)}, step ${fmtUs(bare)}`);
      }
    } finally {
      store.close();
      floor.close();
      fs.rmSync(floorDir, { recursive: true, force: true });
    }
    // What PostgreSQL alone does with the same bracket's writes, v1's statements and format v2's function, same server.
    const raw = await rawPgBrackets(createDb(server.url, 'rawv2'), 100);
    const f = median(F);
    const a = median(action);
    const s = median(step);
    const g = median(group);
    rows.push({
      id: 'pg.floor',
      section: SECTION,
      figure: "fsync floor of the server's data directory (4 KiB write + fsync)",
      value: fmtUs(f),
      ratio: '1 Fpg',
      budget: 'baseline',
      verdict: 'info',
      numbers: { us: f },
    });
    rows.push({
      id: 'pg.action',
      section: SECTION,
      figure: 'bracketed non-idempotent action on PostgreSQL (started + committed durable)',
      value: fmtUs(a),
      ratio: `${(a / f).toFixed(2)} Fpg`,
      budget: 'report (two commits: ≥ 2 Fpg)',
      verdict: 'info',
      note: `a run of steps with one action each minus the same run without actions, in-process, server on this machine; PostgreSQL alone (bench/rawV2.ts): v1's statements ${(raw.v1Us / f).toFixed(2)} Fpg, format v2's two fence-and-append calls ${(raw.v2Us / f).toFixed(2)} Fpg`,
      numbers: { us: a, ratioF: a / f, rawV1Us: raw.v1Us, rawV2Us: raw.v2Us },
    });
    rows.push({
      id: 'pg.action.group',
      section: SECTION,
      figure: 'same, group commit (started durable; committed made durable by the next write)',
      value: fmtUs(g),
      ratio: `${(g / f).toFixed(2)} Fpg`,
      budget: 'report (one commit: ≥ 1 Fpg)',
      verdict: 'info',
      note: 'durability "group" of the engine: a crash before the next write leaves the action in doubt, and verify or a decision settles it',
      numbers: { us: g, ratioF: g / f },
    });
    rows.push({
      id: 'pg.step',
      section: SECTION,
      figure: 'step checkpoint on PostgreSQL (small result)',
      value: fmtUs(s),
      ratio: `${(s / f).toFixed(2)} Fpg`,
      budget: 'report (one commit: ≥ 1 Fpg)',
      verdict: 'info',
      numbers: { us: s, ratioF: s / f },
    });

    try {
      const claims: number[] = [];
      for (let r = 0; r < cfg.rounds; r++) claims.push(await claimToFirstAction(url, `pg-claim-${r}`));
      const c = median(claims);
      rows.push({
        id: 'pg.claim',
        section: SECTION,
        figure: 'claim to first new action of a recovered run (killed at its 4th action)',
        value: fmtUs(c),
        ratio: `${(c / f).toFixed(1)} Fpg`,
        budget: 'report (DBOS: ~1 s to recover a run)',
        verdict: 'info',
        note: 'from the claim transaction to the execute of the action the kill interrupted, 3 steps replayed; a worker finds the run within its --poll-ms (500 ms by default) after the lease expires',
        numbers: { us: c },
      });
    } catch (err) {
      rows.push(errorRow('pg.claim', SECTION, 'claim to first new action of a recovered run', 'report', err));
    }
    try {
      const dir = fs.mkdtempSync(path.join(work, 'workers-'));
      const t = await workerThroughput(createDb(server.url, 'bench_workers'), cfg.workerRuns, dir);
      rows.push({
        id: 'pg.workers',
        section: SECTION,
        figure: `throughput of 4 workers (concurrency 4 each), ${cfg.workerRuns} queued runs of 3 actions`,
        value: `${t.runsPerS.toFixed(0)} runs/s`,
        ratio: `${(t.runsPerS * 3).toFixed(0)} actions/s`,
        budget: 'report',
        verdict: 'info',
        note: `${(t.ms / 1000).toFixed(1)} s from queueing to the last completion; 4 processes on ${os.cpus().length} cores with the server`,
        numbers: { runsPerS: t.runsPerS, ms: t.ms },
      });
    } catch (err) {
      rows.push(errorRow('pg.workers', SECTION, 'throughput of 4 workers', 'report', err));
    }
    if (cfg.peers) {
      try {
        if (!fs.existsSync(path.join(__dirname, 'peers', 'node_modules', '@dbos-inc', 'dbos-sdk')))
          throw new Error('bench/peers has no @dbos-inc/dbos-sdk: run `npm install` in bench/peers (or `npm run bench -- --peers` once)');
        const dbosSteps: number[] = [];
        let version = '?';
        for (let r = 0; r < cfg.rounds; r++) {
          const res = (
            await spawnJson<{ ok: boolean; perStepUs?: number; dbos?: string; error?: string }>(DBOS, [createDb(server.url, `dbos_${r}`), String(cfg.steps)], {
              cwd: path.dirname(DBOS),
            })
          ).json;
          if (!res.ok || res.perStepUs === undefined) throw new Error(res.error ?? 'DBOS failed');
          dbosSteps.push(res.perStepUs);
          version = res.dbos ?? version;
        }
        const d = median(dbosSteps);
        const ratio = a / d;
        rows.push({
          id: 'pg.dbos',
          section: SECTION,
          figure: `peer: DBOS Transact ${version} step (records its result) vs our bracketed action`,
          value: `${fmtUs(d)} vs ${fmtUs(a)}`,
          ratio: `${ratio.toFixed(2)}× DBOS`,
          budget: '≤ 1× DBOS step',
          verdict: ratio <= 1 ? 'PASS' : 'FAIL',
          note: `DBOS step ${(d / f).toFixed(2)} Fpg; with group commit our bracket is ${(g / d).toFixed(2)}× DBOS; PostgreSQL alone with format v2's writes ${(raw.v2Us / d).toFixed(2)}× DBOS; same server, same run; median of ${cfg.rounds} workflows of ${cfg.steps} steps`,
          numbers: { dbosUs: d, actionUs: a, ratio, groupUs: g, groupRatio: g / d },
        });
      } catch (err) {
        rows.push(errorRow('pg.dbos', SECTION, 'peer: DBOS Transact step vs our bracketed action', '≤ 1× DBOS step', err));
      }
    } else {
      rows.push({
        id: 'pg.dbos',
        section: SECTION,
        figure: 'peer: DBOS Transact step vs our bracketed action',
        value: 'not run',
        ratio: '—',
        budget: '≤ 1× DBOS step',
        verdict: 'info',
        note: 'run `npm run bench -- --peers` (installs bench/peers once)',
      });
    }
  } finally {
    server.destroy();
  }
  return rows;
}
