// The LangGraph.js side of the peer comparison: a chain of N nodes checkpointed by its SQLite saver, run in this child.
// Modes: `steps` (time per node), `crash` (exit inside node K, like a killed process), `resume` (time to node K again).
// Prints one JSON line. Kept in plain JS so the product's typecheck and lint never need this package installed.

import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

const [mode, db, nodesArg, bytesArg, atArg, durability] = process.argv.slice(2);
const N = Number(nodesArg);
const BYTES = Number(bytesArg);
const AT = Number(atArg);

// Same generator as bench/workload.ts makeState: a list of chat-like messages of ~256 bytes each.
function makeState(bytes, seed) {
  const messages = [];
  const item = 256;
  const n = Math.max(1, Math.round(bytes / item));
  const filler = 'lorem ipsum dolor sit amet '.repeat(12).slice(0, item - 48);
  for (let i = 0; i < n; i++) messages.push({ id: seed * n + i, role: i % 2 ? 'assistant' : 'user', content: filler });
  return { turn: seed, messages };
}

// Same work as bench/workload.ts deliver: record a key, return an id.
const outbox = [];
function deliver(to, key) {
  outbox.push(key);
  if (outbox.length > 1024) outbox.length = 0;
  return { messageId: `m-${key.length}-${to.length}-${outbox.length}` };
}

function out(obj) {
  fs.writeSync(1, `${JSON.stringify(obj)}\n`);
}

const entries = [];
let tInvoke = 0;
const State = Annotation.Root({
  state: Annotation(),
  sent: Annotation(),
});

const saver = SqliteSaver.fromConnString(db);
let graph = new StateGraph(State);
for (let k = 0; k < N; k++) {
  graph = graph.addNode(`n${k}`, async () => {
    const now = performance.now();
    if (mode === 'resume' && k === AT) {
      out({ ok: true, resumeUs: (now - tInvoke) * 1000, maxRssKb: process.resourceUsage().maxRSS, ...settings() });
      process.exit(0);
    }
    if (mode === 'crash' && k === AT) process.exit(0);
    entries.push(now);
    const sent = deliver(`user${k}@example.com`, `send:peer:${k}`);
    return { state: makeState(BYTES, k), sent };
  });
}
graph = graph.addEdge(START, 'n0');
for (let k = 1; k < N; k++) graph = graph.addEdge(`n${k - 1}`, `n${k}`);
graph = graph.addEdge(`n${N - 1}`, END);
const app = graph.compile({ checkpointer: saver });

function settings() {
  return {
    synchronous: saver.db.pragma('synchronous', { simple: true }),
    journalMode: saver.db.pragma('journal_mode', { simple: true }),
    sqlite: saver.db.prepare('select sqlite_version() AS v').get().v,
    durability,
  };
}

const config = { configurable: { thread_id: 'bench' }, recursionLimit: N + 10, durability };
if (mode === 'resume') {
  tInvoke = performance.now();
  await app.invoke(null, config);
  out({ ok: false, error: `the graph finished without reaching node ${AT}` });
} else {
  const t0 = performance.now();
  await app.invoke({ state: makeState(BYTES, -1), sent: null }, config);
  const total = performance.now() - t0;
  const deltas = entries.slice(1).map((t, i) => (t - entries[i]) * 1000);
  deltas.sort((a, b) => a - b);
  out({
    ok: true,
    perStepUs: deltas[Math.floor(deltas.length / 2)] ?? NaN,
    totalMs: total,
    stateBytes: JSON.stringify(makeState(BYTES, 0)).length,
    ...settings(),
  });
}
