// Requests that arrive the instant a stop is reported: every continue, approve and step finds the stop it was meant for.

import * as assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import * as path from 'node:path';
import { COUNTER, DAP_FIXTURES, lineOf, sessionsPerTest, type Session } from './harness';

const GATES = path.join(DAP_FIXTURES, 'gates.ts');

/** Answers every stop from the `stopped` event handler itself, before anything else runs; resolves at the end. */
function answerEveryStop(s: Session, answer: (e: DebugProtocol.StoppedEvent) => Promise<unknown>): { stops: DebugProtocol.StoppedEvent[]; failures: string[] } {
  const stops: DebugProtocol.StoppedEvent[] = [];
  const failures: string[] = [];
  s.dc.on('stopped', (e: DebugProtocol.StoppedEvent) => {
    stops.push(e);
    answer(e).catch((err: Error) => failures.push(`stop ${stops.length} (${e.body.reason}: ${e.body.description ?? ''}): ${err.message}`));
  });
  return { stops, failures };
}

describe('DAP: a request sent the instant a stop arrives', function () {
  this.timeout(180_000);
  const open = sessionsPerTest();

  it('continue at once, 60 times: every stop is resumed and the run ends', async () => {
    const s = await open();
    const line = lineOf(COUNTER, 'run.step(');
    const seen = answerEveryStop(s, (e) => s.dc.continueRequest({ threadId: e.body.threadId ?? 1 }));
    const exited = s.exitCode();
    await s.launch({ program: COUNTER, input: { steps: 60 } }, { lines: [{ file: COUNTER, line }] });
    assert.equal(await exited, 0, s.text());
    assert.deepEqual(seen.failures, []);
    assert.equal(seen.stops.length, 60);
    assert.ok(seen.stops.every((e) => e.body.reason === 'breakpoint'));
  });

  it('approve (then continue) at a gate, continue at the step right after it, on a loaded machine, 40 times: no stop is lost or cleared', async () => {
    const s = await open();
    // A loaded machine, made on purpose: the adapter is frozen (SIGSTOP) for a moment while the runner answers the
    // approval and runs on to the next stop, so the answer and the next stop reach the adapter in one read.
    const adapterPid = (s.dc as unknown as { _adapterProcess: { pid: number } })._adapterProcess.pid;
    const signal = (sig: NodeJS.Signals): void => {
      try {
        process.kill(adapterPid, sig);
      } catch {
        // The session already ended: nothing to freeze.
      }
    };
    const freeze = (afterMs: number): void => {
      setTimeout(() => {
        signal('SIGSTOP');
        setTimeout(() => signal('SIGCONT'), 150);
      }, afterMs);
    };
    const line = lineOf(GATES, '// after-gate');
    let approvals = 0;
    let continues = 0;
    const seen = answerEveryStop(s, async (e) => {
      if (e.body.reason === 'exception' || (e.body.description ?? '').includes('approval')) {
        approvals++;
        const answered = s.dc.customRequest('approve', { then: 'continue' });
        freeze(approvals % 4);
        return answered;
      }
      continues++;
      return s.dc.continueRequest({ threadId: e.body.threadId ?? 1 });
    });
    const exited = s.exitCode();
    await s.launch({ program: GATES, input: { gates: 40 } }, { lines: [{ file: GATES, line }] });
    const code = await exited.catch((err: Error) => assert.fail(`${err.message}\nrequests that failed: ${seen.failures.join('; ')}`));
    assert.equal(code, 0, s.text());
    assert.deepEqual(seen.failures, []);
    assert.equal(approvals, 40);
    assert.equal(continues, 40);
    // A `continued` event only ever follows the stop it resumes: never one after a newer stop was reported.
    const order = s.events.filter((e) => e.event === 'stopped' || e.event === 'continued').map((e) => e.event);
    for (let i = 1; i < order.length; i++)
      assert.ok(!(order[i] === 'continued' && order[i - 1] === 'continued'), `two continued events in a row at ${i}: ${order.join(',')}`);
    // At most one per approve: none when the next stop was reported before the approval's answer was handled.
    assert.ok(order.filter((e) => e === 'continued').length <= 40, order.join(','));
  });
});
