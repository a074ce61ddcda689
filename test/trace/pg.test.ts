// Issue 25 on a PostgreSQL journal (a private real server): the caller's context is journaled through the same store
// path, and a run killed in an action and resumed sends one trace, the killed action's span in doubt then reconciled.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { usePgServer } from '../pg/server';
import { cliAsync, startReceiver, type Receiver } from './receiver';

describe('traces on a PostgreSQL journal (issue 25)', function () {
  this.timeout(300_000);
  const pg = usePgServer();
  let r: Receiver;
  beforeEach(async () => {
    r = await startReceiver();
  });
  afterEach(async () => {
    await r.close();
  });

  it('a TRACEPARENT run killed at after-start and resumed: one trace under the caller, the action in doubt then reconciled', async () => {
    const dir = tmpDir();
    const url = pg.server.createDatabase();
    const traceId = 'abcdefabcdefabcdefabcdefabcdef12';
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, TRACEPARENT: `00-${traceId}-1234567890abcdef-01` };
    const knobs = path.join(FIXTURES, 'knobs.ts');
    const killed = await cliAsync(dir, ['run', knobs, '--run-id', 'pgk', '--input', '{}', '--crash-at', 'knob.act#2@after-start'], env, url);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const resumed = await cliAsync(dir, ['resume', 'pgk'], { ...env, TRACEPARENT: '' }, url);
    assert.equal(resumed.status, 0, resumed.stderr);
    await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(r.errors, []);
    assert.ok(r.spans.length > 0 && r.spans.every((s) => s.traceId === traceId), 'the resume (without TRACEPARENT) joins the journaled context');
    const acts = r.spans.filter((s) => s.name === 'execute_tool knob.act');
    assert.equal(acts.length, 2);
    const second = acts.find((s) => s.attributes['logbook.action.key'] === 'act:pgk:second');
    assert.ok(second);
    assert.ok(second.events.some((e) => e.name === 'logbook.in_doubt'));
    assert.equal(second.attributes['logbook.action.reconciliation'], 'verified-absent');
  });
});
