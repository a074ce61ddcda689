// Benchmark: round trip of a DAP `next` (request sent → `stopped` event received) over a 1,000-step run.

import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const STEPS = Number(process.env.STEPS ?? 1000);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function summary(label: string, xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `${label.padEnd(34)} n=${String(s.length).padStart(4)}  p50 ${pct(s, 50).toFixed(2)} ms  p95 ${pct(s, 95).toFixed(2)} ms  p99 ${pct(s, 99).toFixed(2)} ms  max ${(s[s.length - 1] ?? NaN).toFixed(2)} ms`;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-bench-dap-'));
  const dc = new DebugClient(process.execPath, path.join(ROOT, 'dist', 'debugAdapter.js'), 'logbook', { cwd: dir });
  dc.defaultTimeout = 60_000;
  let onStop: ((e: DebugProtocol.StoppedEvent) => void) | undefined;
  let ended = false;
  dc.on('stopped', (e: DebugProtocol.StoppedEvent) => onStop?.(e));
  dc.on('terminated', () => {
    ended = true;
  });
  await dc.start();
  const first = new Promise<DebugProtocol.StoppedEvent>((r) => (onStop = r));
  await Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({
      program: path.join(ROOT, 'test', 'fixtures', 'dap', 'counter.ts'),
      input: { steps: STEPS },
      stopOnEntry: true,
      cwd: dir,
      database: path.join(dir, 'journal.db'),
    }),
  ]);
  await first;
  const toAfter: number[] = [];
  const toBefore: number[] = [];
  let stepsDone = 0;
  while (!ended && stepsDone < STEPS) {
    const stopped = new Promise<DebugProtocol.StoppedEvent>((r) => (onStop = r));
    const t0 = performance.now();
    await dc.nextRequest({ threadId: 1 });
    const ev = await stopped;
    const ms = performance.now() - t0;
    if (/checkpointed/.test(ev.body.description ?? '')) {
      toAfter.push(ms);
      stepsDone++;
    } else toBefore.push(ms);
  }
  console.log(`DAP next round trip over ${stepsDone} steps (${os.cpus().length} CPUs, Node ${process.version}, synchronous=FULL journal on ${os.tmpdir()})`);
  console.log(summary('all nexts', [...toAfter, ...toBefore]));
  console.log(summary('step start → step checkpointed', toAfter));
  console.log(summary('checkpointed → next step start', toBefore));
  await dc.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
