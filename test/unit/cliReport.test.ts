// What the extension tells a person after a CLI call that changes a run (src/extension/cli.ts cliReport), from the
// JSON `logbook send` and `logbook approve` print, the held case included.

import { strict as assert } from 'node:assert';
import { cliReport } from '../../src/extension/cli';

const result = (code: number, json: unknown, stderr = ''): Parameters<typeof cliReport>[0] => ({ code, json, stdout: JSON.stringify(json), stderr });

describe('extension: the message after a CLI call (cliReport)', () => {
  it("send that continued the run: the run's outcome, in its status words", () => {
    const r = cliReport(result(0, { runId: 'r', outcome: { runId: 'r', status: 'completed' }, continued: 'resumed' }));
    assert.deepEqual(r, { level: 'info', text: 'Run r: completed' });
  });

  it("send kept for later: the run's status, not the word `kept` taken for an outcome", () => {
    const r = cliReport(result(0, { runId: 'r', outcome: 'kept', expect: 'later', status: 'waiting', continued: 'not-waiting' }));
    assert.equal(r.level, 'info');
    assert.match(r.text, /^Run r: /);
    assert.doesNotMatch(r.text, /undefined|Run : /);
  });

  it('send or approve while another driver holds the run: kept for that session, named', () => {
    const sent = cliReport(result(0, { runId: 'r', outcome: 'kept', continued: 'held', owner: 'pid 7 on vm (worker)' }));
    assert.deepEqual(sent, { level: 'info', text: 'Run r: kept for the session that holds it (pid 7 on vm (worker)), which takes it' });
    const approved = cliReport(result(0, { runId: 'r', actionId: 'a', decision: 'approve', continued: 'held', owner: null }));
    assert.match(approved.text, /^Run r: kept for the session that holds it \(another process\)/);
  });

  it('approve after another driver moved the run on: where the run is now', () => {
    assert.deepEqual(cliReport(result(0, { runId: 'r', actionId: 'a', decision: 'approve', continued: 'not-waiting', status: 'completed' })), {
      level: 'info',
      text: 'Run r: completed',
    });
  });

  it('a run that stops again (exit 3) warns with its reason; a failure shows the error line', () => {
    const w = cliReport(result(3, { runId: 'r', status: 'awaiting-approval', waitingOn: { reason: 'ship needs approval' } }));
    assert.equal(w.level, 'warning');
    assert.match(w.text, / — ship needs approval$/);
    const e = cliReport(result(2, undefined, 'error [LB_RUN_NOT_FOUND] There is no run x.\n'));
    assert.deepEqual(e, { level: 'error', text: 'Agent Logbook: error [LB_RUN_NOT_FOUND] There is no run x.' });
  });
});
