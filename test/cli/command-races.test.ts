// Two CLI commands racing on one run in real processes (send, approve, reject, cancel, compensate, resume), each pair
// several times: each command ends as one of the outcomes it has, refused ones with their own error code and nothing
// internal or of the journal's, the effect happens at most once, and the run ends in a status one of them explains.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli, cliEnded, cliJson, FIXTURES, show, tmpDir } from '../helpers';

const REPLIER = path.join(FIXTURES, 'events', 'replier.ts');
const GATES = path.join(FIXTURES, 'dap', 'gates.ts');
const ROUNDS = 3;

type Ended = Awaited<ReturnType<typeof cliEnded>>;

/** What a command may end as in any race: its exit codes, and the codes of the refusals it may print. */
interface May {
  readonly exits: readonly number[];
  readonly refusals: readonly string[];
}

const MAY: Record<string, May> = {
  // 0 done (or left to the holder), 3 stopped again; refused: the run ended or is cancelled, or the other took the event.
  send: { exits: [0, 3, 2], refusals: ['LB_EVENT_REFUSED'] },
  approve: { exits: [0, 3, 2], refusals: ['LB_EVENT_REFUSED', 'LB_BAD_DECISION'] },
  // A rejection fails the run (exit 1, LB_APPROVAL_REJECTED) when it is the decision taken.
  reject: { exits: [0, 1, 2], refusals: ['LB_EVENT_REFUSED', 'LB_BAD_DECISION', 'LB_APPROVAL_REJECTED'] },
  cancel: { exits: [0, 2, 4], refusals: ['LB_RUN_NOT_CANCELLABLE', 'LB_LEASE_HELD'] },
  compensate: { exits: [0, 2, 4], refusals: ['LB_LEASE_HELD'] },
  resume: { exits: [0, 2, 3, 4], refusals: ['LB_RUN_NOT_RESUMABLE', 'LB_LEASE_HELD'] },
};

const ENDS = ['completed', 'cancelled', 'compensated', 'failed', 'waiting', 'awaiting-approval'];

function check(name: string, ended: Ended, label: string): void {
  const may = MAY[name] ?? assert.fail(`no outcomes listed for ${name}`);
  assert.ok(may.exits.includes(ended.code ?? -1), `${label}: ${name} exited ${ended.code}\n${ended.out}`);
  assert.doesNotMatch(ended.out, /internal error|LB_DB_|LB_JOURNAL/, `${label}: ${name}\n${ended.out}`);
  for (const code of ended.out.match(/\bLB_[A-Z_]+/g) ?? []) assert.ok(may.refusals.includes(code), `${label}: ${name} printed ${code}\n${ended.out}`);
}

async function race(kind: 'event' | 'gate', a: string[], b: string[]): Promise<void> {
  for (let i = 0; i < ROUNDS; i++) {
    const dir = tmpDir('logbook-race-');
    let action = '';
    if (kind === 'gate') {
      const first = cliJson(dir, ['run', GATES, '--run-id', 'r', '--input', '{"gates":1}']);
      assert.equal(first.status, 3, first.stderr);
      action = first.json.waitingOn.actionId as string;
    } else assert.equal(cli(dir, ['run', REPLIER, '--run-id', 'r']).status, 3);
    const argv = (x: string[]): string[] => x.map((w) => (w === 'ACTION' ? action : w));
    const label = `${a[0] ?? ''} × ${b[0] ?? ''}, round ${i + 1}`;
    const [ea, eb] = await Promise.all([cliEnded(dir, argv(a)), cliEnded(dir, argv(b))]);
    check(a[0] ?? '', ea, label);
    check(b[0] ?? '', eb, label);
    const after = show(dir, 'r');
    assert.ok(ENDS.includes(after.run.status as string), `${label}: the run ended ${after.run.status}\n${ea.out}\n${eb.out}`);
    // The effect at most once: the replier's answer in its ledger, the gate's review in the journal.
    const ledger = path.join(dir, 'ledger.log');
    if (fs.existsSync(ledger)) assert.ok(fs.readFileSync(ledger, 'utf8').trim().split('\n').length <= 1, label);
    for (const x of after.actions as Array<{ executions: number }>) assert.ok(x.executions <= 1, `${label}: ${JSON.stringify(x)}`);
  }
}

describe('cli: two commands racing on one run (real processes)', function () {
  this.timeout(300_000);
  const reply = ['send', 'r', 'reply', '--data', '{"text":"x"}'];

  it('resume × send, cancel × send, cancel × resume, compensate × send on a run waiting for an event', async () => {
    await race('event', ['resume', 'r'], reply);
    await race('event', ['cancel', 'r'], reply);
    await race('event', ['cancel', 'r'], ['resume', 'r']);
    await race('event', ['compensate', 'r'], reply);
  });

  it('resume × approve, approve × approve, reject × approve, cancel × approve, compensate × approve at an approval gate', async () => {
    await race('gate', ['resume', 'r'], ['approve', 'r', 'ACTION']);
    await race('gate', ['approve', 'r', 'ACTION'], ['approve', 'r', 'ACTION']);
    await race('gate', ['reject', 'r', 'ACTION'], ['approve', 'r', 'ACTION']);
    await race('gate', ['cancel', 'r'], ['approve', 'r', 'ACTION']);
    await race('gate', ['compensate', 'r'], ['approve', 'r', 'ACTION']);
  });
});
