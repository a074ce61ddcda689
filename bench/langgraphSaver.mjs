// One LangGraph.js thread of N supersteps in this child, checkpointed by Logbook's saver or by LangGraph's SqliteSaver,
// or (`rungraph`) driven by runGraph as a Logbook run, each node execution a journaled step.
// Each superstep appends one ~256-byte message to a growing list; a 16 KB document channel is written once, at the
// start, and carried unchanged. Prints one JSON line: time per superstep, and the saver's file size after a WAL
// checkpoint. Plain JS, like bench/peers/*.mjs: it loads the built dist/langgraph.js (`npm run bench` builds it).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

const [kind, db, stepsArg] = process.argv.slice(2);
const N = Number(stepsArg);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { LogbookSaver } = createRequire(import.meta.url)(path.join(root, 'dist', 'langgraph.js'));
const Database = createRequire(import.meta.url)('better-sqlite3');

const filler = 'lorem ipsum dolor sit amet '.repeat(12).slice(0, 208);
const State = Annotation.Root({
  document: Annotation(),
  messages: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  turn: Annotation(),
});

const saver = kind === 'logbook' ? new LogbookSaver({ journal: db }) : kind === 'rungraph' ? new LogbookSaver() : SqliteSaver.fromConnString(db);
const stamps = [];
const graph = new StateGraph(State)
  .addNode('chat', (s) => {
    stamps.push(performance.now());
    return { messages: [{ role: s.turn % 2 ? 'assistant' : 'user', content: `${s.turn} ${filler}` }], turn: s.turn + 1 };
  })
  .addEdge(START, 'chat')
  .addConditionalEdges('chat', (s) => (s.turn >= N ? END : 'chat'))
  .compile({ checkpointer: saver });

const config = { configurable: { thread_id: 'bench' }, recursionLimit: N + 10, durability: 'sync' };
const first = { document: 'd'.repeat(16 * 1024), turn: 0 };
if (kind === 'rungraph') {
  // The package's own runtime (dist/runtime.js, as agent-logbook/langgraph itself requires it).
  const { defineAgent, openJournal } = createRequire(import.meta.url)(path.join(root, 'dist', 'runtime.js'));
  const { runGraph } = createRequire(import.meta.url)(path.join(root, 'dist', 'langgraph.js'));
  const input = { '~standard': { version: 1, vendor: 'bench', validate: (v) => ({ value: v }) } };
  const agent = defineAgent({
    name: 'bench-graph',
    input,
    run: async (run) => (await runGraph(run, graph, first, { config: { recursionLimit: N + 10 } })).turn,
  });
  const journal = openJournal({ journal: db, agents: [agent] });
  const out = await journal.start(agent, {}, { runId: 'bench' });
  if (out.status !== 'completed') throw new Error(`the run ended ${out.status}`);
  journal.close();
} else await graph.invoke(first, config);
// Per superstep: between consecutive node entries (the checkpoint of one superstep, then the next node starts).
const gaps = stamps.slice(1).map((t, i) => t - (stamps[i] ?? t));
gaps.sort((a, b) => a - b);
const perStepUs = (gaps[Math.floor(gaps.length / 2)] ?? NaN) * 1000;
if (kind !== 'sqlite') saver.close();
const raw = new Database(db);
const synchronous = kind !== 'sqlite' ? 2 : saver.db.pragma('synchronous', { simple: true });
raw.pragma('wal_checkpoint(TRUNCATE)');
raw.close();
const size = (f) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
fs.writeSync(1, `${JSON.stringify({ ok: true, perStepUs, bytes: size(db) + size(`${db}-wal`), synchronous, steps: stamps.length })}\n`);
process.exit(0);
