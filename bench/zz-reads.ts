import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildJournal } from './journalBuilder';
import { openStore } from '../src/runtime';
import { LAZY_ABOVE_BYTES } from '../src/runtime/lazyValue';
import { INLINE_RESULT_BYTES } from '../src/runtime/stepCursor';
import { cpuUs } from './measure';
const dir = '/tmp/zzreads';
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, 'j.db');
if (!fs.existsSync(file)) buildJournal(file, { runId: 'r1m', done: 1_000_000, perStep: 1, steps: 1_000_010 });
const store = openStore(file);
for (let round = 0; round < 3; round++) {
  let c = cpuUs();
  const d = store.reader.firstDamage('r1m', { steps: Number.MAX_SAFE_INTEGER, actions: 'open', deferAbove: LAZY_ABOVE_BYTES });
  const damage = cpuUs() - c;
  c = cpuUs();
  const count = store.reader.stepCount('r1m');
  let n = 0;
  for (let from = 0; from < count; from += 512) n += store.reader.replayStepHeads('r1m', from, from + 512, INLINE_RESULT_BYTES).length;
  const heads = cpuUs() - c;
  console.log(`damage check ${(damage / 1000).toFixed(0)} ms (${d ? 'damaged' : 'clean'}); ${n} heads ${(heads / 1000).toFixed(0)} ms`);
}
