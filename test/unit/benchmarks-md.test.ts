// BENCHMARKS.md holds only what bench/report.ts renders: its data read back and rendered again, numbers masked, is the file.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { maskNumbers, reportOf } from '../../bench/readBack';
import { formatMarkdown } from '../../bench/report';

const ROOT = path.join(__dirname, '..', '..');

describe('BENCHMARKS.md: written by npm run bench, nothing added by hand', () => {
  const md = fs.readFileSync(path.join(ROOT, 'BENCHMARKS.md'), 'utf8');

  it('is, numbers aside, what bench/report.ts renders from its own rows (run `npm run bench` to rewrite it)', () => {
    const rendered = formatMarkdown(reportOf(md), []);
    assert.equal(maskNumbers(md), maskNumbers(rendered));
  });

  it('reads back every row and build, with its verdict', () => {
    const rep = reportOf(md);
    assert.ok(rep.rows.length >= 20, String(rep.rows.length));
    assert.ok(
      rep.rows.every((r) => ['PASS', 'FAIL', 'info', 'not built', 'error'].includes(r.verdict)),
      rep.rows.map((r) => r.verdict).join(' '),
    );
    assert.ok(
      rep.rows.some((r) => r.id === 'pg.action'),
      'the PostgreSQL rows',
    );
    assert.ok(rep.builds.length > 0);
    assert.ok(rep.baselines.fUs > 0);
  });

  it('sees a hand-written section, a reworded note or sentence (negative controls), but not new figures', () => {
    const same = (text: string): boolean => maskNumbers(text) === maskNumbers(formatMarkdown(reportOf(text), []));
    assert.ok(same(md.replace(/43\.8 µs/g, '51.2 µs').replace('207 s in all', '312 s in all')), 'other numbers are still the same text');
    assert.ok(!same(`${md}\n## PostgreSQL journal and workers (by hand)\n\nMeasured twice.\n`), 'an added section');
    assert.ok(!same(md.replace('Two fsyncs per action, as designed.', 'Two fsyncs per action.')), 'a reworded note');
    assert.ok(!same(md.replace('do not edit by hand', 'edit freely')), 'a reworded intro');
  });

  it('masks numbers with their units, and lists of them, as one mark', () => {
    assert.equal(maskNumbers('**43.8 µs** (per round: 37.5 µs, 37.0 µs); 1.63× per unit; 5 rounds'), '**#** (per round: #); # per unit; # rounds');
    assert.equal(maskNumbers('n/a vs 2.26 ms'), '#');
  });
});
