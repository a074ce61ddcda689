// Attacks on the traces mapping with a damaged journal: unreadable event data and action rows fall back to what the
// schema guarantees (no crash, no garbage attribute); a row the reader refuses is a clear LB_JOURNAL_INVALID.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/runtime/store';
import { dbOf } from '../../src/runtime/store/db';
import { FIXTURES, tmpDir } from '../helpers';
import { cliAsync } from './receiver';

const KNOBS = path.join(FIXTURES, 'knobs.ts');

function damage(db: string, sql: string, ...params: unknown[]): void {
  const store = openStore(db);
  try {
    dbOf(store.db)
      .prepare(sql)
      .run(...params);
  } finally {
    store.close();
  }
}

interface JsonSpan {
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

describe('traces: a damaged journal (issue 25, attacked)', function () {
  this.timeout(120_000);

  it('unreadable event data and action args/results: every span is still there, named by what the schema keeps', async () => {
    const dir = tmpDir();
    const db = path.join(dir, 'journal.db');
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'dmg', '--input', '{}']);
    assert.equal(run.status, 0, run.stderr);
    damage(db, "UPDATE actions SET result = '{not json', args = '[1,2' WHERE id LIKE '%second'");
    damage(db, "UPDATE events SET data = 'garbage' WHERE kind = 'step.started'");
    damage(db, `UPDATE events SET data = '{"stats":[1,2],"type":5,"effect":{},"reconciliation":7}' WHERE kind LIKE 'action.%' OR kind LIKE 'run.%'`);
    const file = path.join(dir, 'dmg.json');
    const t = await cliAsync(dir, ['traces', 'dmg', '--file', file]);
    assert.equal(t.status, 0, t.stderr);
    const spans = (JSON.parse(fs.readFileSync(file, 'utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: JsonSpan[] }> }> }).resourceSpans[0]
      ?.scopeSpans[0]?.spans;
    assert.ok(spans);
    assert.deepEqual(spans.map((s) => s.name).sort(), [
      'execute_tool knob.act',
      'execute_tool knob.act',
      'invoke_agent knobs',
      'start knobs #1',
      'step #1',
      'step #2',
    ]);
    for (const s of spans)
      for (const a of s.attributes) {
        const [kind] = Object.keys(a.value);
        assert.ok(kind && ['stringValue', 'intValue', 'boolValue', 'doubleValue', 'arrayValue'].includes(kind), `${s.name} ${a.key} is an OTLP value`);
      }
  });

  it('a row the reader refuses: LB_JOURNAL_INVALID with the remedy, nothing sent or written', async () => {
    const dir = tmpDir();
    const db = path.join(dir, 'journal.db');
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'bad', '--input', '{}']);
    assert.equal(run.status, 0, run.stderr);
    damage(db, "UPDATE events SET at = 'noon' WHERE kind = 'action.committed'");
    const file = path.join(dir, 'bad.json');
    const t = await cliAsync(dir, ['traces', 'bad', '--file', file]);
    assert.notEqual(t.status, 0);
    assert.match(t.stderr, /LB_JOURNAL_INVALID.*Restore the file from a backup/s);
    assert.ok(!fs.existsSync(file), 'no file of garbage');
  });
});
