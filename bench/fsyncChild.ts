// Child for the read-only row's fsync count: one run doing `count` actions of one kind, under strace by the parent.

import * as fs from 'node:fs';
import { openStore, startRun } from '../src/runtime';
import { actionAgent } from './workload';

async function main(): Promise<void> {
  const [db, kind, countArg, durability] = process.argv.slice(2);
  const store = openStore(db ?? 'fsync.db');
  const times: number[] = [];
  const agentKind = kind === 'read-only' ? 'read-only' : 'non-idempotent';
  const outcome = await startRun(store, actionAgent(agentKind, Number(countArg), times), {
    script: 'bench/workload.ts',
    input: {},
    durability: durability === 'group' ? 'group' : 'full',
    log: () => undefined,
    role: 'bench',
  });
  store.close();
  fs.writeSync(1, `${JSON.stringify({ ok: outcome.status === 'completed', actions: times.length })}\n`);
}

main().catch((err: unknown) => fs.writeSync(1, `${JSON.stringify({ ok: false, error: String(err) })}\n`));
