// Rows for features other branches build (rehearsal, debug adapter, extension): detected from the checkout, measured
// through their public entry points when present, "not built" otherwise.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DapClient } from './dapClient';
import { median, nowUs, percentile } from './measure';

export const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const EMAIL = path.join(ROOT, 'examples', 'email-campaign.ts');

export interface Features {
  readonly rehearse: boolean;
  readonly debugAdapter: boolean;
  readonly extension: boolean;
  readonly reader: boolean;
  /** The extension branch's benchmark inside a real VS Code (scripts/bench-vscode.mjs), and whether its tools are set up. */
  readonly vscodeBench: boolean;
  readonly vscodeTools: boolean;
}

export function detectFeatures(root = ROOT): Features {
  const has = (p: string): boolean => fs.existsSync(path.join(root, p));
  return {
    rehearse: has('src/rehearse') && has('dist/cli.js'),
    debugAdapter: has('dist/debugAdapter.js'),
    extension: has('src/extension/extension.ts'),
    reader: has('dist/readerMain.js'),
    vscodeBench: has('scripts/bench-vscode.mjs') && has('dist/extension.js'),
    vscodeTools: has('.e2e-tools') || process.env.E2E_TOOLS !== undefined,
  };
}

interface Exec {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

function exec(args: readonly string[], cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv = {}): Promise<Exec> {
  return new Promise((resolve, reject) => {
    const t0 = nowUs();
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: (nowUs() - t0) / 1000 });
    });
  });
}

// ---- rehearsal -------------------------------------------------------------------------------------------------

export interface RehearsalFigures {
  readonly kills: number;
  readonly wallMs: number;
  readonly killsPerMinute: number;
  readonly input: string;
  readonly exitCode: number | null;
}

/** The kills a rehearsal made, from the summary of its --json report (one point can be killed more than once with --depth). */
export function countKills(report: unknown): number | undefined {
  if (typeof report !== 'object' || report === null) return undefined;
  const kills = (report as { summary?: { kills?: unknown } }).summary?.kills;
  return typeof kills === 'number' && Number.isFinite(kills) ? kills : undefined;
}

/** `logbook rehearse <email example> --points all --jobs 2 --json`, timed from spawn to exit (it keeps its own journals). */
export async function measureRehearsal(dir: string, recipients: number): Promise<RehearsalFigures> {
  const base = ['rehearse', EMAIL, '--points', 'all', '--jobs', '2', '--json'];
  const input = JSON.stringify({ recipients });
  let r = await exec([CLI, ...base, '--input', input], dir, 540_000, { LOGBOOK_STATE_DIR: dir });
  let used = input;
  if (r.code === 2 && /input/i.test(r.stderr)) {
    // An older rehearse without --input: the example's default input.
    r = await exec([CLI, ...base], dir, 540_000, { LOGBOOK_STATE_DIR: dir });
    used = '(default)';
  }
  let report: unknown;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    throw new Error(`logbook rehearse printed no JSON (exit ${r.code}): ${r.stderr.slice(-400)}`);
  }
  const kills = countKills(report);
  if (kills === undefined) throw new Error('the rehearsal report has no summary.kills');
  return { kills, wallMs: r.ms, killsPerMinute: kills / (r.ms / 60_000), input: used, exitCode: r.code };
}

// ---- debug adapter ---------------------------------------------------------------------------------------------

const ADAPTER = path.join(ROOT, 'dist', 'debugAdapter.js');

/** The adapter spawned for a bench session, once it has answered `initialize`. */
async function initializedAdapter(dir: string): Promise<DapClient> {
  const client = new DapClient(ADAPTER, dir, { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1' });
  try {
    await client.request('initialize', {
      clientID: 'logbook-bench',
      adapterID: 'logbook',
      linesStartAt1: true,
      columnsStartAt1: true,
      pathFormat: 'path',
      supportsRunInTerminalRequest: false,
    });
  } catch (err) {
    client.kill();
    throw err;
  }
  return client;
}

async function startSession(
  dir: string,
  program: string,
  input: unknown,
  stopOnEntry: boolean,
): Promise<{ client: DapClient; threadId: number; launched: Promise<unknown> }> {
  const client = await initializedAdapter(dir);
  const initialized = client.event('initialized');
  // Some adapters answer launch only after configurationDone: keep its promise and await it later.
  const launched = client.request(
    'launch',
    { type: 'logbook', request: 'launch', name: 'bench', program, input, database: path.join(dir, 'dap.db'), cwd: dir, stopOnEntry, noDebug: false },
    120_000,
  );
  launched.catch(() => undefined);
  await initialized;
  await client.request('configurationDone');
  return { client, threadId: 1, launched };
}

export interface DapNextFigures {
  readonly p50Us: number;
  readonly p90Us: number;
  readonly count: number;
}

/** Stops on entry of a 1,000-step run, then times `next` from request to the `stopped` event, step after step. */
export async function measureDapNext(dir: string, steps: number): Promise<DapNextFigures> {
  const { client, launched } = await startSession(dir, path.join(ROOT, 'bench', 'fixtureSteps.ts'), { steps }, true);
  try {
    const entry = await client.event(['stopped', 'terminated'], 60_000);
    await launched;
    if (entry.event !== 'stopped') throw new Error('the adapter did not stop on entry (stopOnEntry: true)');
    const threadId = typeof entry.body?.threadId === 'number' ? entry.body.threadId : 1;
    const times: number[] = [];
    for (let i = 0; i < steps; i++) {
      const t0 = nowUs();
      const stopped = client.event(['stopped', 'terminated']);
      await client.request('next', { threadId });
      const ev = await stopped;
      times.push(nowUs() - t0);
      if (ev.event === 'terminated') break;
    }
    return { p50Us: median(times), p90Us: percentile(times, 90), count: times.length };
  } finally {
    await client.request('disconnect', { terminateDebuggee: true }, 5000).catch(() => undefined);
    client.kill();
  }
}

/** Wall time of the email example with no breakpoints under the adapter, from spawn to `terminated`. */
export async function debuggerRunMs(dir: string, recipients: number): Promise<number> {
  const t0 = nowUs();
  const { client, launched } = await startSession(dir, EMAIL, { recipients }, false);
  try {
    await client.event('terminated', 120_000);
    await launched;
    return (nowUs() - t0) / 1000;
  } finally {
    await client.request('disconnect', { terminateDebuggee: true }, 5000).catch(() => undefined);
    client.kill();
  }
}

/**
 * The debugger's second process alone: the adapter spawned on the same Node, to its answer to `initialize`, with no
 * run. What a debugger run costs before its runner starts, which the CLI's one process does not pay.
 */
export async function adapterAloneMs(dir: string): Promise<number> {
  const t0 = nowUs();
  const client = await initializedAdapter(dir);
  const ms = (nowUs() - t0) / 1000;
  client.kill();
  return ms;
}

/** Wall time of the same run from the CLI, from spawn to exit. */
export async function cliRunMs(dir: string, recipients: number): Promise<number> {
  const r = await exec([CLI, 'run', EMAIL, '--input', JSON.stringify({ recipients }), '--journal', path.join(dir, 'cli.db')], dir, 120_000, {
    LOGBOOK_STATE_DIR: dir,
  });
  if (r.code !== 0) throw new Error(`logbook run exited ${r.code}: ${r.stderr.slice(-400)}`);
  return r.ms;
}

// ---- extension in a real VS Code (the extension branch's own benchmark scene) ----------------------------------

export interface VscodeFigures {
  readonly activationMs?: number;
  readonly treeRootMs?: number;
  readonly treeRuns?: number;
  readonly openRunMs?: number;
  readonly openRunSteps?: number;
}

/** Reads the `[measure]` lines the extension's benchmark scene prints. */
export function parseVscodeMeasures(text: string): VscodeFigures {
  const num = (re: RegExp, group = 1): number | undefined => {
    const m = re.exec(text);
    return m?.[group] === undefined ? undefined : Number(m[group]);
  };
  const out: { -readonly [K in keyof VscodeFigures]: VscodeFigures[K] } = {};
  const activationMs = num(/\[measure\] activate\(\): ([\d.]+) ms/);
  const treeRuns = num(/\[measure\] tree root for (\d+) runs[^:\n]*: ([\d.]+) ms/);
  const treeRootMs = num(/\[measure\] tree root for (\d+) runs[^:\n]*: ([\d.]+) ms/, 2);
  const openRunSteps = num(/\[measure\] open a run of (\d+) steps[^:\n]*: ([\d.]+) ms/);
  const openRunMs = num(/\[measure\] open a run of (\d+) steps[^:\n]*: ([\d.]+) ms/, 2);
  if (activationMs !== undefined) out.activationMs = activationMs;
  if (treeRuns !== undefined) out.treeRuns = treeRuns;
  if (treeRootMs !== undefined) out.treeRootMs = treeRootMs;
  if (openRunSteps !== undefined) out.openRunSteps = openRunSteps;
  if (openRunMs !== undefined) out.openRunMs = openRunMs;
  return out;
}

/** `node scripts/bench-vscode.mjs`: activation and the runs tree on a 10,000-run journal, in code-server + Chromium. */
export async function measureVscode(timeoutMs = 420_000): Promise<VscodeFigures> {
  const r = await exec([path.join(ROOT, 'scripts', 'bench-vscode.mjs')], ROOT, timeoutMs);
  const figures = parseVscodeMeasures(`${r.stdout}\n${r.stderr}`);
  if (r.code !== 0 || figures.activationMs === undefined) {
    throw new Error(
      `scripts/bench-vscode.mjs exited ${r.code} after ${(r.ms / 1000).toFixed(0)} s without its measures: ${(r.stderr || r.stdout).slice(-400)}`,
    );
  }
  return figures;
}

// ---- extension (journal side, through the reader process) ------------------------------------------------------

const READER = path.join(ROOT, 'dist', 'readerMain.js');

/** Talks to dist/readerMain.js (JSON lines: {id, method, params} → {id, ok, result}) and times requests. */
export class ReaderClient {
  private readonly proc;
  private buf = '';
  private next = 1;
  private readonly pending = new Map<number, (msg: { ok: boolean; result?: unknown; error?: { message: string } }) => void>();

  constructor(cwd: string) {
    this.proc = spawn(process.execPath, [READER], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as { id?: number; ok: boolean; result?: unknown; error?: { message: string } };
          if (typeof msg.id === 'number') this.pending.get(msg.id)?.(msg);
        } catch {
          // Notifications and non-JSON lines are not answers.
        }
      }
    });
  }

  request(method: string, params: Record<string, unknown>, timeoutMs = 60_000): Promise<{ result: unknown; us: number }> {
    const id = this.next++;
    const t0 = nowUs();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reader: no answer to ${method} within ${timeoutMs} ms`)), timeoutMs);
      this.pending.set(id, (msg) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (msg.ok) resolve({ result: msg.result, us: nowUs() - t0 });
        else reject(new Error(`reader ${method} failed: ${msg.error?.message ?? 'no message'}`));
      });
      this.proc.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  close(): void {
    this.proc.kill('SIGKILL');
  }
}
