// LangGraph's checkpoints of a run's thread are fenced like every transition: a saver writing for a session whose lease
// epoch is no longer the run's saves nothing (LB_LEASE_LOST, in the write's transaction), on SQLite and PostgreSQL;
// and a time-travel fork is recorded once on the fork's row (GraphCheckpoints.recordFork).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { emptyCheckpoint, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { beginSession, endSession, openStore, type Store } from '../../src/runtime/store';
import { currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { LogbookSaver } from '../../src/langgraph/saver';
import { driving, type Driving } from '../../src/langgraph/context';
import { tmpDir } from '../helpers';
import { usePgServer } from '../pg/server';

const RUN_FENCE = Symbol.for('agent-logbook.run-fence');

/** An owner whose process is gone, so another session may take its run. */
function deadOwner(label: string): Owner {
  return {
    token: `t-${label}-${Math.random()}`,
    pid: 4_000_000 + Math.floor(Math.random() * 100_000),
    pidStart: '1',
    host: hostField(os.hostname(), currentNode()),
    label,
  };
}

/** A run object as runGraph drives it: its id and the lease fence the runtime puts on it. */
function driven(saver: LogbookSaver, runId: string, epoch: number): Driving {
  const run = { id: runId, [RUN_FENCE]: { runId, epoch, assert: () => undefined } } as unknown as Driving['run'];
  return { run, saver };
}

function checkpoint(): Checkpoint {
  const c = emptyCheckpoint();
  c.channel_values = { n: 1 };
  c.channel_versions = { n: 1 };
  return c;
}

function cases(fresh: () => string): void {
  let target: string;
  let store: Store;
  let saver: LogbookSaver;
  const sessions: string[] = [];
  beforeEach(() => {
    target = fresh();
    store = openStore(target);
    saver = new LogbookSaver({ journal: target });
  });
  afterEach(() => {
    saver.close();
    store.close();
    for (const t of sessions.splice(0)) endSession(t);
  });

  it('a saver writing for a session the run has moved past saves no checkpoint and no write; the current session does', async () => {
    const first = store.createRun({ id: 'f1', agent: 'a', script: 's.ts', input: null }, deadOwner('first'));
    const live = beginSession('second');
    sessions.push(live.token);
    const second = store.acquireRun('f1', live, { status: 'running', newAttempt: true, purpose: 'resume' });
    assert.ok(second.epoch > first.epoch);
    const config = { configurable: { thread_id: 'f1', checkpoint_ns: '' } };
    const stale = driving.run(driven(saver, 'f1', first.epoch), () => saver.put(config, checkpoint(), { source: 'loop', step: 0, parents: {} }, { n: 1 }));
    await assert.rejects(stale, (err: any) => err.code === 'LB_LEASE_LOST');
    const staleWrites = driving.run(driven(saver, 'f1', first.epoch), () =>
      saver.putWrites({ configurable: { ...config.configurable, checkpoint_id: 'c-1' } }, [['n', 2]], 'task-1'),
    );
    await assert.rejects(staleWrites, (err: any) => err.code === 'LB_LEASE_LOST');
    assert.equal(await saver.getTuple(config), undefined, 'nothing of the thread was saved');
    assert.deepEqual(saver.writtenChannels('f1', 'c-1'), new Map());
    // The session that holds the run saves.
    const saved = await driving.run(driven(saver, 'f1', second.epoch), () =>
      saver.put(config, checkpoint(), { source: 'loop', step: 0, parents: {} }, { n: 1 }),
    );
    assert.ok((await saver.getTuple(saved))?.checkpoint.channel_values.n === 1);
    // Outside a run (LangGraph's own use of the saver), nothing is fenced.
    await saver.put({ configurable: { thread_id: 'plain', checkpoint_ns: '' } }, checkpoint(), { source: 'loop', step: 0, parents: {} }, { n: 1 });
    assert.ok(await saver.getTuple({ configurable: { thread_id: 'plain' } }));
  });

  it('records a time-travel fork on the fork’s row once, with its event; a run already a fork is left as it is', () => {
    store.createRun({ id: 'o1', agent: 'a', script: 's.ts', input: null }, deadOwner('o'));
    store.createRun({ id: 'k1', agent: 'a', script: 's.ts', input: null }, deadOwner('k'));
    assert.equal(saver.recordFork('k1', 'o1', 3, { checkpoint: 'c-9', via: 'langgraph' }), true);
    assert.equal(saver.recordFork('k1', 'elsewhere', 1, {}), false);
    assert.equal(saver.recordFork('missing', 'o1', 1, {}), false);
    const row = store.reader.run('k1');
    assert.equal(row?.forked_from, 'o1');
    assert.equal(row?.forked_at_step, 3);
    const events = store.reader.events('k1').filter((e) => e.kind === 'run.forked');
    assert.deepEqual(
      events.map((e) => JSON.parse(e.data ?? 'null')),
      [{ from: 'o1', atStep: 3, checkpoint: 'c-9', via: 'langgraph' }],
    );
  });
}

describe('LangGraph checkpoints fenced by the run’s lease, on both engines', function () {
  this.timeout(120_000);
  describe('on SQLite', () => {
    let dir: string;
    let n = 0;
    before(() => (dir = tmpDir('logbook-graph-fence-')));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    cases(() => path.join(dir, `g${++n}.db`));
  });
  describe('on PostgreSQL', () => {
    const pg = usePgServer();
    cases(() => pg.server.createDatabase());
  });
});
