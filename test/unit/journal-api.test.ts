// The host API (openJournal): start, decide, compensate, list and recover runs in-process, and its refusals.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAction, defineAgent, openJournal, type Journal } from '../../src/runtime/public';
import { ROOT, tmpDir } from '../helpers';

const quiet = { log: (): void => undefined };

const effects: string[] = [];
const charge = defineAction({
  type: 'api.charge',
  version: 1,
  effect: 'non-idempotent',
  // A default: callers of run.do may leave `currency` out (the args are typed by the schema's input).
  args: z.object({ cents: z.number().int(), currency: z.string().default('EUR') }),
  key: (_a, run) => `charge:${run.id}`,
  execute: (a) => {
    effects.push(`charge ${a.cents} ${a.currency}`);
    return { id: `ch-${effects.length}` };
  },
  compensate: (_a, r) => {
    effects.push(`refund ${r.id}`);
  },
});
const notify = defineAction({
  type: 'api.notify',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ to: z.string() }),
  key: (a, run) => `notify:${run.id}:${a.to}`,
  execute: (a) => effects.push(`notify ${a.to}`),
});

const shop = defineAgent({
  name: 'api-shop',
  input: z.strictObject({ cents: z.number().int().positive(), to: z.string().default('ops') }),
  async run(run, input) {
    const c = await run.step('charge', () => run.do(charge, { cents: input.cents }));
    await run.step('notify', () => run.do(notify, { to: input.to }));
    return { charged: c.id };
  },
});

describe('host API (openJournal)', () => {
  let dir: string;
  let journal: Journal;
  beforeEach(() => {
    dir = tmpDir();
    effects.length = 0;
    journal = openJournal({ journal: path.join(dir, 'journal.db'), agents: [shop], ...quiet });
  });
  afterEach(() => journal.close());

  it('starts a run (input defaults applied, strict input refused), lists it, and compensates it', async () => {
    const out = await journal.start(shop, { cents: 500 }, { runId: 'o-1' });
    assert.equal(out.status, 'completed');
    assert.deepEqual(out.output, { charged: 'ch-1' });
    assert.deepEqual(effects, ['charge 500 EUR', 'notify ops']);

    const bad = await journal.start(shop, { cents: 5, typo: 1 } as never, { runId: 'o-2' }).catch((e: unknown) => e);
    assert.ok(bad instanceof LogbookError && bad.code === ErrorCodes.INVALID_INPUT, String(bad));
    assert.match(bad.message, /typo/);
    assert.equal(journal.run('o-2'), undefined, 'a refused input journals nothing');

    const listed = journal.runs();
    assert.deepEqual(
      listed.map((r) => [r.id, r.agent, r.status, r.script]),
      [['o-1', 'api-shop', 'completed', 'api:api-shop']],
    );
    assert.deepEqual(journal.run('o-1')?.input, { cents: 500, to: 'ops' });

    const report = await journal.compensate('o-1');
    assert.equal(report.status, 'compensated');
    assert.deepEqual(
      report.irreversible.map((i) => i.type),
      ['api.notify'],
    );
    assert.deepEqual(effects.slice(2), ['refund ch-1']);
    assert.equal(journal.run('o-1')?.status, 'compensated');
  });

  it('refuses what it cannot do with a coded error, and never arms crash injection', async () => {
    const crash = await journal.start(shop, { cents: 1 }, { runId: 'o-3', crashAt: ['api.charge@after-start'] } as never).catch((e: unknown) => e);
    assert.ok(crash instanceof LogbookError && crash.code === ErrorCodes.USAGE, String(crash));
    assert.match(crash.message, /rehearsal tool/);
    assert.equal(journal.run('o-3'), undefined);
    assert.deepEqual(effects, []);

    const missing = await journal.resume('nope').catch((e: unknown) => e);
    assert.ok(missing instanceof LogbookError && missing.code === ErrorCodes.RUN_NOT_FOUND, String(missing));

    const other = openJournal({ journal: path.join(dir, 'journal.db'), ...quiet });
    try {
      await journal.start(shop, { cents: 2 }, { runId: 'o-4' });
      const unknown = await other.resume('o-4').catch((e: unknown) => e);
      assert.ok(unknown instanceof LogbookError && unknown.code === ErrorCodes.RUN_NOT_RESUMABLE, String(unknown));
      assert.match(unknown.message, /openJournal\(\{ agents/);
    } finally {
      other.close();
    }
  });

  it('finds a run whose process was SIGKILLed as interrupted, and recovers it without repeating its effects', async () => {
    // A separate host process starts a run and is killed by the test (not by Logbook) while the run waits.
    const file = path.join(dir, 'journal.db');
    const holding = path.join(dir, 'holding');
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'fixtures', 'api-host.ts'), file, holding], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
    while (!fs.existsSync(holding)) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');

    const left = journal.interrupted();
    assert.deepEqual(
      left.map((r) => [r.id, r.status, r.interruptedWhile]),
      [['held-1', 'interrupted', 'running']],
    );
    const done = await journal.recoverInterrupted();
    assert.equal(done.length, 1);
    const first = done[0];
    assert.ok(first?.action === 'resumed', JSON.stringify(first));
    assert.equal(first.outcome.status, 'completed');
    assert.equal(first.outcome.stats.stepsReplayed, 1, 'the charge checkpointed before the kill is replayed, not repeated');
    assert.deepEqual(effects, ['notify ops'], 'this process ran only the effect the killed one never reached');
    assert.deepEqual(journal.interrupted(), []);
  });
});
