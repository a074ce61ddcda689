// run.child on a real PostgreSQL server, with real processes: the scenarios of test/child/harness.ts on a database.

import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { usePgServer } from './server';
import type { Env } from './workers';
import * as s from '../child/harness';

describe('run.child on PostgreSQL (real processes)', function () {
  this.timeout(240_000);
  const pg = usePgServer();
  const env = (): Env => {
    const dir = tmpDir('logbook-pg-child-');
    return { db: pg.server.createDatabase(), dir, ledger: path.join(dir, 'ledger.log') };
  };

  it('a parent killed while its child runs: resuming the parent resumes the child, one child, every effect once', () => s.parentKilledWhileChildRuns(env()));
  it('the child killed while a resumed parent waits for it: the parent resumes the child itself', () => s.childKilledWhileParentWaits(env()));
  it('a parent resumed twice at once drives one child', () => s.parentResumedTwice(env()));
  it('killed at child:after-start and child:after-end, the resumed parent re-attaches to its one child', () => s.killedAtChildPoints(env()));
  it('compensating the parent undoes the child in the same walk, newest first, each inverse once', () => s.compensationOfParentAndChildren(env()));
  it('a failing child makes run.child throw LB_CHILD_FAILED naming it', () => s.failingChild(env()));
  it('cancel --compensate of the parent reaches and compensates its child', () => s.cancelReachesChild(env(), true));
  it('under workers: killed mid-child, another worker finishes parent and child once', () => s.workerKilledMidChild(env()));
});
