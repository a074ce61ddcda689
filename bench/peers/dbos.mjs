// The DBOS Transact side of the PostgreSQL comparison: one workflow of N steps on the given server, run in this child.
// Prints one JSON line: the time per DBOS step (it records each step's output in the system database when the step returns).
// Kept in plain JS so the product's typecheck and lint never need this package installed.

import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { DBOS } from '@dbos-inc/dbos-sdk';

const [url, stepsArg] = process.argv.slice(2);
const N = Number(stepsArg);

// Same work as the Logbook side: record a key, return an id.
const outbox = [];
async function deliver(i) {
  outbox.push(i);
  if (outbox.length > 1024) outbox.length = 0;
  return { messageId: `m-${i}-${outbox.length}` };
}

async function steps(n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await DBOS.runStep(() => deliver(i), { name: `deliver ${i}` });
    times.push((performance.now() - t0) * 1000);
  }
  return times;
}

try {
  DBOS.setConfig({ name: 'logbook-bench', systemDatabaseUrl: url, runAdminServer: false, logLevel: 'error' });
  const wf = DBOS.registerWorkflow(steps, { name: 'bench-steps' });
  await DBOS.launch();
  const handle = await DBOS.startWorkflow(wf)(N);
  const times = (await handle.getResult()).slice(Math.min(5, Math.floor(N / 10)));
  times.sort((a, b) => a - b);
  const perStepUs = times[Math.floor(times.length / 2)];
  const version = JSON.parse(fs.readFileSync(new URL('./node_modules/@dbos-inc/dbos-sdk/package.json', import.meta.url), 'utf8')).version;
  await DBOS.shutdown();
  process.stdout.write(`${JSON.stringify({ ok: true, perStepUs, steps: N, dbos: version })}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ ok: false, error: String(err?.stack ?? err) })}\n`);
  process.exitCode = 1;
}
