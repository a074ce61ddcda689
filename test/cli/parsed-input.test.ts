// Issue 19 case 2: the input schema (a coercion, a dollars-to-cents transform, defaults) is applied once, when a run is
// created; a resume after a kill, a fork, a detached run's workers and the host API all give the script that value.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { cli, cliJson, show, tmpDir } from '../helpers';
import { OUTPUT, PARSED, PRICED, RAW, charges, detachedAttemptsSeeParsedInput, inputsSeen } from '../priced';
import { loadScript } from '../../src/loader/loadScript';
import { openJournal } from '../../src/runtime/public';

const input = JSON.stringify(RAW);

describe('cli: every attempt sees the input parsed once (issue 19 case 2)', function () {
  this.timeout(120_000);

  it('run, killed after the charge, then resume: both attempts get the parsed input; charged once, in cents', () => {
    const dir = tmpDir();
    const killed = cli(dir, ['run', PRICED, '--input', input, '--run-id', 'p1', '--crash-at', 'priced.charge#1@after-commit']);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const resumed = cliJson(dir, ['resume', 'p1']);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(resumed.json.output, OUTPUT);
    assert.deepEqual(inputsSeen(dir, 'p1'), [
      { attempt: 1, input: PARSED },
      { attempt: 2, input: PARSED },
    ]);
    assert.deepEqual(charges(dir, 'p1'), [1250]);
    assert.deepEqual(show(dir, 'p1').run.input, PARSED, 'the journal holds the schema output');
  });

  it('fork at the charge: the fork charges what the origin did, and its output agrees with its replayed step', () => {
    const dir = tmpDir();
    const origin = cliJson(dir, ['run', PRICED, '--input', input, '--run-id', 'origin']);
    assert.equal(origin.status, 0, origin.stderr);
    assert.deepEqual(origin.json.output, OUTPUT);
    const fork = cliJson(dir, ['fork', 'origin', '--step', 'charge', '--run-id', 'fork']);
    assert.equal(fork.status, 0, fork.stderr);
    assert.equal(fork.json.stats.stepsReplayed, 1, 'the quote is replayed from the origin');
    // The replayed quote says 1250: a fork that parsed the input again would charge (and say) 125000.
    assert.deepEqual(fork.json.output, OUTPUT);
    assert.deepEqual(charges(dir, 'fork'), [1250]);
    assert.deepEqual(inputsSeen(dir, 'fork'), [{ attempt: 1, input: PARSED }]);
    assert.deepEqual(show(dir, 'fork').run.input, PARSED);
  });

  it('run --detach and workers on SQLite: the killed attempt and the one that takes over get the parsed input', async () => {
    const dir = tmpDir('logbook-priced-worker-');
    await detachedAttemptsSeeParsedInput({ db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') }, 'queued-p');
  });

  describe('host API', () => {
    const saved = process.env.LOGBOOK_STATE_DIR;
    afterEach(() => {
      if (saved === undefined) delete process.env.LOGBOOK_STATE_DIR;
      else process.env.LOGBOOK_STATE_DIR = saved;
    });

    it('start, resume and recoverInterrupted give the script the parsed input', async () => {
      const dir = tmpDir();
      process.env.LOGBOOK_STATE_DIR = dir;
      const { agent } = await loadScript(PRICED);
      // Two runs killed by the CLI after their charge: one resumed by id, one found at boot.
      for (const id of ['api-resume', 'api-boot'])
        assert.equal(cli(dir, ['run', PRICED, '--input', input, '--run-id', id, '--crash-at', 'priced.charge#1@after-commit']).signal, 'SIGKILL');
      const journal = openJournal({ journal: path.join(dir, 'journal.db'), agents: [agent], log: () => undefined });
      try {
        const started = await journal.start(agent, RAW, { runId: 'api-start' });
        assert.equal(started.status, 'completed');
        assert.deepEqual(started.output, OUTPUT);
        const resumed = await journal.resume('api-resume');
        assert.deepEqual(resumed.output, OUTPUT);
        const recovered = await journal.recoverInterrupted();
        assert.deepEqual(
          recovered.map((r) => [r.runId, r.action]),
          [['api-boot', 'resumed']],
        );
        assert.deepEqual(recovered[0]?.action === 'resumed' ? recovered[0].outcome.output : undefined, OUTPUT);
        assert.deepEqual(journal.run('api-start')?.input, PARSED);
      } finally {
        journal.close();
      }
      assert.deepEqual(inputsSeen(dir, 'api-start'), [{ attempt: 1, input: PARSED }]);
      for (const id of ['api-resume', 'api-boot']) {
        assert.deepEqual(
          inputsSeen(dir, id),
          [
            { attempt: 1, input: PARSED },
            { attempt: 2, input: PARSED },
          ],
          id,
        );
        assert.deepEqual(charges(dir, id), [1250], id);
      }
    });
  });
});
