// run.child with real processes on a SQLite journal: kills of the parent and of the child, two resumes at once, a second
// driver, run.child's fault points, compensation, a failing child and cancel (scenarios in test/child/harness.ts).

import * as path from 'node:path';
import { tmpDir } from '../helpers';
import type { Env } from '../pg/workers';
import * as s from '../child/harness';

function sqlite(): Env {
  const dir = tmpDir('logbook-child-');
  return { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
}

describe('run.child (SQLite, real processes)', function () {
  this.timeout(180_000);

  it('a parent killed while its child runs: the child is not restarted; resuming the parent resumes it, one child, every effect once', () =>
    s.parentKilledWhileChildRuns(sqlite()));
  it('the child killed: a resumed parent waits while another process drives its child, then resumes the child itself when that process dies', () =>
    s.childKilledWhileParentWaits(sqlite()));
  it('a second driver on the child while its parent drives it is refused with LB_LEASE_HELD and writes nothing', () => s.secondDriverOnChildRefused(sqlite()));
  it('a parent resumed twice at once: one resume drives it, the other is refused; one child, not two', () => s.parentResumedTwice(sqlite()));
  it('killed at child:after-start and child:after-end, the resumed parent re-attaches to its one child', () => s.killedAtChildPoints(sqlite()));
  it('compensating the parent undoes the child in the same walk, newest first; killed in the child’s inverse, it finishes once', () =>
    s.compensationOfParentAndChildren(sqlite()));
  it('a failing child makes run.child throw LB_CHILD_FAILED naming the child; resuming the parent resumes the child', () => s.failingChild(sqlite()));
  it('a child stopped for a decision stops its parent (exit 3, naming the child); decided there, the parent goes on', () => s.childNeedsDecision(sqlite()));
  it('cancelling the parent stops its running child too', () => s.cancelReachesChild(sqlite(), false));
  it('cancel --compensate of the parent compensates its child with it', () => s.cancelReachesChild(sqlite(), true));
});

describe('run.child under `logbook worker` (SQLite)', function () {
  this.timeout(180_000);

  it('the worker that claims the parent drives the child; killed mid-child, another worker finishes both, every effect once', () =>
    s.workerKilledMidChild(sqlite()));
});
