// The files `logbook rehearse` writes (--junit for CI, --report) are output: a secret a script's data quotes is masked.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES, tmpDir } from '../helpers';

describe('secrets: the rehearsal report files', function () {
  this.timeout(300_000);

  it("a key in the uncrashed run's output reaches neither --junit, --report nor stdout, in plain or escaped form", () => {
    // Quotes and an ampersand: the forms XML and JSON escape, which a mask of the final text alone would miss.
    const key = 'sk-live-"Wh&re<house>\'Key-9f8e7d6c5b4a39281706';
    const cwd = tmpDir();
    const r = spawnSync(process.execPath, [CLI, 'rehearse', path.join(FIXTURES, 'echoes-key.ts'), '--junit', 'report.xml', '--report', 'report.json'], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', WAREHOUSE_API_KEY: key },
      timeout: 240_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const xml = fs.readFileSync(path.join(cwd, 'report.xml'), 'utf8');
    const json = fs.readFileSync(path.join(cwd, 'report.json'), 'utf8');
    assert.match(json, /the warehouse accepted key «secret»/, json);
    assert.match(xml, /<testcase /, xml);
    const forms = [
      key,
      JSON.stringify(key).slice(1, -1),
      key.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
      'Wh&re',
      'Key-9f8e7d6c5b4a39281706',
    ];
    for (const [name, text] of [
      ['report.xml', xml],
      ['report.json', json],
      ['stdout', r.stdout],
      ['stderr', r.stderr],
    ] as const) {
      for (const f of forms) assert.ok(!text.includes(f), `${name} holds the key (${f})`);
    }
  });
});
