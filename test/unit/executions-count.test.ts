// A call of execute is counted with the write that settles it: nothing records an execution before it happens, and a
// non-idempotent action's bracket is two journal transactions (issue 22's "executing leaves the hot path").

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, startRun } from '../../src/runtime';
import { RunWriter } from '../../src/runtime/store/writer';
import { EXAMPLES, FIXTURES, cli, show, tmpDir } from '../helpers';

/** Commit frames in a WAL file whose salts match its header: one per committed transaction since the WAL last restarted. */
function walCommits(wal: string): number {
  const b = fs.readFileSync(wal);
  if (b.length < 32) return 0;
  const pageSize = b.readUInt32BE(8);
  const salt1 = b.readUInt32BE(16);
  const salt2 = b.readUInt32BE(20);
  let commits = 0;
  for (let off = 32; off + 24 + pageSize <= b.length; off += 24 + pageSize) {
    if (b.readUInt32BE(off + 8) !== salt1 || b.readUInt32BE(off + 12) !== salt2) break;
    if (b.readUInt32BE(off + 4) !== 0) commits++;
  }
  return commits;
}

/** What the journal said inside execute: the action's count, its `action.executing` events, the WAL's commits so far. */
interface Seen {
  readonly executions: number | undefined;
  readonly executingEvents: number;
  readonly commits: number;
  /** Commits the reading itself made: format 2's fold, by a reader in another connection (not the run's writes). */
  readonly readerCommits: number;
}

function chargeAgent(file: string, seen: Seen[], commits: number[]) {
  let store: ReturnType<typeof openStore> | undefined;
  const charge = defineAction({
    type: 'card.charge',
    version: 1,
    effect: 'non-idempotent',
    args: z.object({ cents: z.number() }),
    key: (_a, run) => `charge:${run.id}`,
    execute: (_a, ctx) => {
      store ??= openStore(file);
      const commits = walCommits(`${file}-wal`);
      const executions = store.reader.action(ctx.runId, ctx.idempotencyKey)?.executions;
      const executingEvents = store.reader.events(ctx.runId).filter((e) => e.kind === 'action.executing').length;
      seen.push({ executions, executingEvents, commits, readerCommits: walCommits(`${file}-wal`) - commits });
      return { ok: true };
    },
  });
  const agent = defineAgent({
    name: 'charge',
    input: z.object({}),
    async run(run) {
      await run.step('charge', async () => {
        commits.push(walCommits(`${file}-wal`));
        return await run.do(charge, { cents: 100 });
      });
      await run.step('after', () => void commits.push(walCommits(`${file}-wal`)));
      store?.close();
    },
  });
  return agent;
}

/** Runs chargeAgent on a fresh journal: what execute saw, and the WAL's commits in the step's body and in the next step. */
async function runCharge() {
  const file = path.join(tmpDir(), 'j.db');
  const store = openStore(file);
  const seen: Seen[] = [];
  const after: number[] = [];
  const out = await startRun(store, chargeAgent(file, seen, after), { script: 'c.ts', input: {}, log: () => undefined });
  assert.equal(out.status, 'completed', out.error?.message);
  return { store, out, seen, after };
}

describe('the count of a call of execute', () => {
  it('is not written before the call, goes in with committed, and the bracket is two transactions', async () => {
    const { store, out, seen, after } = await runCharge();
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.executions, 0, 'inside execute the journal has the action started, its call not counted');
    assert.equal(seen[0]!.executingEvents, 0);
    // From the step's body to the next step: started (the step's start with it), committed (the call's count with it),
    // the step's checkpoint; and the fold the reader inside execute made to read the action.
    assert.equal(seen[0]!.readerCommits, 1, "the reader folded the run's started action to read it");
    assert.equal(after[1]! - after[0]! - seen[0]!.readerCommits, 3);
    assert.equal(after[1]! - seen[0]!.commits - seen[0]!.readerCommits, 2);
    const row = store.reader.action(out.runId, `charge:${out.runId}`);
    assert.equal(row?.status, 'committed');
    assert.equal(row?.executions, 1);
    const kinds = store.reader.events(out.runId).map((e) => e.kind);
    assert.deepEqual(
      kinds.filter((k) => k.startsWith('action.')),
      ['action.started', 'action.executing', 'action.committed'],
    );
    store.close();
  });

  it('control: counted in a lazy transaction of its own before the call (format 1), the same run takes four commits and counts first', async () => {
    interface Inside {
      write(durable: boolean, fn: (now: number) => void): void;
      executing(now: number, stepIdx: number, id: string): void;
    }
    const proto = RunWriter.prototype as unknown as { actionExecuting: (this: Inside, stepIdx: number, id: string) => void };
    const held = proto.actionExecuting;
    proto.actionExecuting = function (this: Inside, stepIdx: number, id: string) {
      this.write(false, (now) => this.executing(now, stepIdx, id));
    };
    try {
      const { store, seen, after } = await runCharge();
      assert.equal(seen[0]!.executions, 1, 'the control counts the call before it happens');
      assert.equal(after[1]! - after[0]! - seen[0]!.readerCommits, 4, 'the count was a commit of its own');
      store.close();
    } finally {
      proto.actionExecuting = held;
    }
  });

  it('killed after the call: the action is started with no count, shows "0+", and a verify that finds it counts it', () => {
    const dir = tmpDir();
    const note = path.join(dir, 'crash-note.json');
    const run = (id: string, spec: string, env: Record<string, string> = {}) =>
      cli(dir, ['run', path.join(EXAMPLES, 'email-campaign.ts'), '--input', '{"recipients":3}', '--run-id', id, '--crash-at', spec], {
        LOGBOOK_CRASH_NOTE: note,
        ...env,
      });
    const k = run('ek', 'email.send#2@after-execute');
    assert.equal(k.signal, 'SIGKILL', k.stdout + k.stderr);
    // The kill's last words name the call it leaves uncounted (a rehearsal adds it to the journal's count).
    assert.deepEqual(JSON.parse(fs.readFileSync(note, 'utf8')), { spec: 'email.send#2@after-execute', uncounted: 'email:ek:user2@example.com' });
    // Control: killed before the call, there is no call to name.
    const before = run('eb', 'email.send#2@after-start');
    assert.equal(before.signal, 'SIGKILL', before.stdout + before.stderr);
    assert.deepEqual(JSON.parse(fs.readFileSync(note, 'utf8')), { spec: 'email.send#2@after-start' });
    // A planted secret: the last words are masked as every line the CLI prints.
    run('es', 'email.send#2@after-execute', { MAILER_API_TOKEN: 'user2@example.com' });
    assert.deepEqual(JSON.parse(fs.readFileSync(note, 'utf8')), { spec: 'email.send#2@after-execute', uncounted: 'email:es:«secret»' });
    // A call longer than the write-behind delay was counted while it ran: a kill after it leaves nothing uncounted,
    // so a rehearsal does not count it twice.
    const long = cli(dir, ['run', path.join(FIXTURES, 'knobs.ts'), '--run-id', 'kl', '--crash-at', 'knob.act#1@after-execute'], {
      LOGBOOK_CRASH_NOTE: note,
      KNOB_EXECUTE_MS: '200',
    });
    assert.equal(long.signal, 'SIGKILL', long.stdout + long.stderr);
    assert.deepEqual(JSON.parse(fs.readFileSync(note, 'utf8')), { spec: 'knob.act#1@after-execute' });
    assert.equal(show(dir, 'kl').actions[0].executions, 1);
    const killed = show(dir, 'ek').actions.find((a: { id: string }) => a.id === 'email:ek:user2@example.com');
    assert.equal(killed.status, 'started');
    assert.equal(killed.executions, 0);
    const text = cli(dir, ['show', 'ek']);
    assert.match(text.stdout, /email:ek:user2@example\.com\s+email\.send\s+non-idempotent\s+in doubt\s+0\+\s/);
    const r = cli(dir, ['resume', 'ek']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const done = show(dir, 'ek').actions.find((a: { id: string }) => a.id === 'email:ek:user2@example.com');
    assert.equal(done.reconciliation, 'verified');
    assert.equal(done.executions, 1, 'verify found the email sent: its call ran, counted or not');
  });
});
