// The peer comparison: LangGraph.js with its SQLite checkpointer vs a Logbook agent, both in child processes.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnJson } from './children';
import { fmtRatio, fmtUs, median } from './measure';
import { errorRow, judge, type Row } from './report';

const PEERS_DIR = path.resolve(__dirname, 'peers');
const LANGGRAPH = path.join(PEERS_DIR, 'langgraph.mjs');

interface PeerRun {
  readonly ok: boolean;
  readonly perStepUs?: number;
  readonly resumeUs?: number;
  readonly maxRssKb?: number;
  readonly stateBytes?: number;
  readonly synchronous?: number;
  readonly journalMode?: string;
  readonly sqlite?: string;
  readonly durability?: string;
  readonly error?: string;
}

/** Installs bench/peers (its own package.json, its own node_modules) unless already there. */
export function installPeers(log: (line: string) => void): void {
  if (
    fs.existsSync(path.join(PEERS_DIR, 'node_modules', '@langchain', 'langgraph-checkpoint-sqlite')) &&
    fs.existsSync(path.join(PEERS_DIR, 'node_modules', '@dbos-inc', 'dbos-sdk'))
  )
    return;
  log('installing bench/peers (LangGraph.js and its SQLite checkpointer, DBOS Transact) with npm; this happens once…');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { cwd: PEERS_DIR, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm install in bench/peers failed (exit ${r.status}); see the output above`);
}

const SYNC_NAMES: Record<number, string> = { 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' };

function syncWord(v: number | undefined): string {
  return v === undefined ? '?' : `${SYNC_NAMES[v] ?? v} (${v})`;
}

function check(r: PeerRun, what: string): PeerRun {
  if (!r.ok) throw new Error(`${what}: ${r.error ?? 'failed'}`);
  return r;
}

export interface PeerConfig {
  readonly nodes: number;
  readonly bytes: readonly number[];
  readonly rounds: number;
}

/** Per-step and resume cost of both systems at each state size, interleaved round by round; rows with ratios. */
export async function peerRows(work: string, logbookChild: string, cfg: PeerConfig, log: (line: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const N = cfg.nodes;
  const at = N - 1;
  for (const bytes of cfg.bytes) {
    const lb: number[] = [];
    const lgAsync: number[] = [];
    const lgSync: number[] = [];
    const lbResume: number[] = [];
    const lgResume: number[] = [];
    let lbSettings: PeerRun | undefined;
    let lgSettings: PeerRun | undefined;
    const failures: string[] = [];
    for (let r = 0; r < cfg.rounds; r++) {
      // One round is all of its measures or none, so every median comes from the same rounds; a round that fails
      // (a child that could not start, say) is tried once more, then reported.
      let done = false;
      for (let attempt = 0; attempt < 2 && !done; attempt++) {
        const dir = fs.mkdtempSync(path.join(work, `peer-${bytes}-`));
        const file = (name: string): string => path.join(dir, name);
        const args = (db: string, mode: string, extra: string[] = []): string[] => [mode, db, String(N), String(bytes), String(at), ...extra];
        try {
          const lbRun = check((await spawnJson<PeerRun>(logbookChild, args(file('lb-steps.db'), 'steps'))).json, 'logbook steps');
          const asyncRun = check(
            (await spawnJson<PeerRun>(LANGGRAPH, args(file('lg-async.db'), 'steps', ['async']), { cwd: PEERS_DIR })).json,
            'langgraph steps (async)',
          );
          const syncRun = check(
            (await spawnJson<PeerRun>(LANGGRAPH, args(file('lg-sync.db'), 'steps', ['sync']), { cwd: PEERS_DIR })).json,
            'langgraph steps (sync)',
          );
          // Resume: a process dies inside the last step, a new one resumes to it.
          await spawnJson(logbookChild, args(file('lb-resume.db'), 'crash')).catch(() => undefined);
          const lbRes = check((await spawnJson<PeerRun>(logbookChild, args(file('lb-resume.db'), 'resume'))).json, 'logbook resume');
          await spawnJson(LANGGRAPH, args(file('lg-resume.db'), 'crash', ['sync']), { cwd: PEERS_DIR }).catch(() => undefined);
          const lgRes = check(
            (await spawnJson<PeerRun>(LANGGRAPH, args(file('lg-resume.db'), 'resume', ['sync']), { cwd: PEERS_DIR })).json,
            'langgraph resume',
          );
          lbSettings = lbRun;
          lgSettings = syncRun;
          lb.push(lbRun.perStepUs ?? Number.NaN);
          lgAsync.push(asyncRun.perStepUs ?? Number.NaN);
          lgSync.push(syncRun.perStepUs ?? Number.NaN);
          lbResume.push(lbRes.resumeUs ?? Number.NaN);
          lgResume.push(lgRes.resumeUs ?? Number.NaN);
          done = true;
          log(
            `  peers ${bytes} B round ${r + 1}/${cfg.rounds}: logbook ${fmtUs(lbRun.perStepUs ?? NaN)}/step, langgraph ${fmtUs(syncRun.perStepUs ?? NaN)}/step (sync)`,
          );
        } catch (err) {
          failures.push(`round ${r + 1}${attempt ? ' (again)' : ''}: ${(err instanceof Error ? err.message : String(err)).slice(0, 160)}`);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    if (lb.length === 0) {
      rows.push(
        errorRow(
          `peer.step.${bytes}`,
          'peer: LangGraph.js + SqliteSaver',
          `per step and resume, ${N} steps of ${bytes} B: Logbook vs LangGraph`,
          'report',
          new Error(`every round failed: ${failures.join('; ')}`),
        ),
      );
      continue;
    }
    const failed = failures.length ? ` ${failures.length} attempt(s) failed and are left out: ${failures.join('; ')}` : '';
    const size = bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} B`;
    const settings = `Logbook: WAL, synchronous=${syncWord(lbSettings?.synchronous)}, every checkpoint fsynced before the next step; LangGraph: ${lgSettings?.journalMode ?? '?'}, synchronous=${syncWord(lgSettings?.synchronous)} (read back from the saver's connection: commits are not fsynced, so a power loss can lose the latest checkpoints). Same SQLite ${lbSettings?.sqlite ?? '?'} / ${lgSettings?.sqlite ?? '?'}; state ${lbSettings?.stateBytes ?? '?'} B vs ${lgSettings?.stateBytes ?? '?'} B of JSON.`;
    const mLb = median(lb);
    const mSync = median(lgSync);
    const mAsync = median(lgAsync);
    rows.push({
      id: `peer.step.${bytes}`,
      section: 'peer: LangGraph.js + SqliteSaver',
      figure: `per step, ${N} steps checkpointing ${size}: Logbook vs LangGraph (durability "sync")`,
      value: `${fmtUs(mLb)} vs ${fmtUs(mSync)}`,
      ratio: `${fmtRatio(mLb / mSync)} LangGraph`,
      budget: 'report',
      verdict: 'info',
      note: `LangGraph with its default durability "async" (checkpoint written while the next node runs): ${fmtUs(mAsync)} per step, Logbook = ${fmtRatio(mLb / mAsync)} of it. ${settings} Medians of ${lb.length} rounds.${failed}`,
      numbers: {
        logbookUs: mLb,
        langgraphSyncUs: mSync,
        langgraphAsyncUs: mAsync,
        logbookSynchronous: lbSettings?.synchronous ?? -1,
        langgraphSynchronous: lgSettings?.synchronous ?? -1,
      },
    });
    const rLb = median(lbResume);
    const rLg = median(lgResume);
    // Issue 22: with large state (100 KB and up) a resume must not be slower than LangGraph's load of its latest checkpoint.
    const large = bytes >= 100 * 1024;
    const jr = large ? judge(rLb / rLg, 1) : undefined;
    rows.push({
      id: `peer.resume.${bytes}`,
      section: 'peer: LangGraph.js + SqliteSaver',
      figure: `resume after ${at} of ${N} steps (${size} state) to the next step: Logbook vs LangGraph`,
      value: `${fmtUs(rLb)} vs ${fmtUs(rLg)}`,
      ratio: `${fmtRatio(rLb / rLg)} LangGraph`,
      budget: large ? '≤ 1× LangGraph' : 'report',
      verdict: jr?.verdict ?? 'info',
      note:
        (jr?.miss ? `${jr.miss}; ` : '') +
        'Each side in a fresh process (cold JIT), from the resume call to the first step that runs. Logbook replays every journaled step (returning its checkpoint); LangGraph loads its latest checkpoint.',
      numbers: { logbookUs: rLb, langgraphUs: rLg },
    });
  }
  return rows;
}
