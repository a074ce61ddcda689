// `logbook rehearse --points all` over the three examples: every fault point killed for real, every invariant kept.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, tmpDir } from '../helpers';
import { sample } from '../../src/rehearse/points';
import { brokenSummary, rehearse } from './util';

describe('rehearse --points all over the examples', function () {
  this.timeout(900_000);

  let emailPoints: any[] = [];

  it('email campaign (5 recipients): every point finishes, no email twice, verify settles every doubt', () => {
    const cwd = tmpDir();
    const reportFile = path.join(cwd, 'report.json');
    const r = rehearse(cwd, [
      path.join(EXAMPLES, 'email-campaign.ts'),
      '--input',
      '{"recipients":5}',
      '--points',
      'all',
      '--jobs',
      '2',
      '--report',
      reportFile,
    ]);
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    // 6 steps × 2 step points + 5 sends × 5 action points (the fifth: execute throws after the email went out).
    assert.equal(s.points, 37);
    assert.equal(s.kills, 37);
    assert.equal(s.finished, 37);
    assert.equal(s.sameOutput, 37);
    assert.equal(s.withDuplicates, 0);
    assert.deepEqual(s.sameEffects, { matched: 37, compared: 37 });
    assert.equal(s.broken, 0);
    // A kill after start (not sent), after execute (sent), and an error after the send: verify settles every way.
    assert.equal(s.settled['verify found it'], 10);
    assert.equal(s.settled['verify found nothing, executed'], 5);
    assert.deepEqual(r.report.baseline.probe['email.send'].length, 5);
    assert.deepEqual(JSON.parse(fs.readFileSync(reportFile, 'utf8')).summary, s);
    emailPoints = r.report.campaigns.map((c: any) => c.point);
  });

  it('order fulfilment: approvals, verify, re-execution and decisions from the provider record; stock exact', () => {
    const cwd = tmpDir();
    const r = rehearse(cwd, [path.join(EXAMPLES, 'order-fulfilment.ts'), '--points', 'all', '--jobs', '2'], {}, true);
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    // The human report: a table per killed step or action type, the invariants, the findings, the verdict.
    assert.match(r.stdout, /KILLED IN +KIND +POINTS +FINISHED +SAME OUTPUT +TWICE/);
    assert.match(r.stdout, /^payments\.charge +action +5 +5\/5 +5\/5 +0 /m);
    assert.match(r.stdout, /email\.send has no verify: a crash at after-start or after-execute-throw or after-execute leaves it in doubt/);
    assert.match(r.stdout, /every invariant held in \d+ campaign\(s\)/);
    assert.doesNotMatch(r.stdout, /\[#+-*\]/, 'no progress bar when stderr is not a terminal');
    assert.equal(r.report.baseline.status, 'completed');
    assert.equal(r.report.baseline.processes, 2, 'the uncrashed run stops once at the approval gate');
    assert.deepEqual(r.report.baseline.output.stockLeft, { 'sku-kettle': 11, 'sku-mug': 38 });
    assert.ok(s.points >= 35, `points: ${s.points}`);
    assert.equal(s.broken, 0);
    assert.equal(s.finished, s.points);
    assert.equal(s.sameOutput, s.points, 'stock counts, charge id and tracking number equal the uncrashed run');
    assert.equal(s.withDuplicates, 0);
    // The email has no verify: its three in-doubt points stop for a decision, taken from the outbox's record.
    const email = s.decisions.find((d: any) => d.type === 'email.send');
    assert.ok(email, JSON.stringify(s.decisions));
    assert.equal(email.happened, 2);
    assert.equal(email.notHappened, 1);
    assert.equal(email.assumed, 0);
    assert.ok(s.settled['verify found it'] >= 1 && s.settled['re-executed with its key'] >= 1, JSON.stringify(s.settled));
    assert.ok(s.approvals['ship.create'] >= s.points, 'every campaign passes the approval gate');
    // Points in the process after approval (the resume that ships) are rehearsed too.
    assert.ok(r.report.campaigns.some((c: any) => c.point.process === 2 && c.point.target === 'ship.create'));
  });

  it('order fulfilment with a declined card: every kill, including during compensation, ends compensated with stock exact', () => {
    const cwd = tmpDir();
    const r = rehearse(cwd, [path.join(EXAMPLES, 'order-fulfilment.ts'), '--input', '{"card":"tok_declined"}', '--points', 'all', '--jobs', '2']);
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.equal(r.report.baseline.status, 'compensated');
    assert.deepEqual(r.report.baseline.probe['payments.charge'], []);
    assert.equal(r.report.baseline.probe['inverse of stock.reserve'].length, 2);
    assert.ok(r.report.campaigns.some((c: any) => c.point.point === 'compensate:after-execute'));
    assert.equal(s.finished, s.points);
    assert.equal(s.withDuplicates, 0, 'no reservation released twice');
    assert.deepEqual(s.sameEffects, { matched: s.points, compared: s.points });
  });

  it('research agent: model calls are never paid twice, and resumes save the calls already made', () => {
    const cwd = tmpDir();
    const r = rehearse(cwd, [path.join(EXAMPLES, 'research-agent.ts'), '--input', '{"sources":1}', '--points', 'all', '--jobs', '2']);
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.equal(s.broken, 0);
    assert.equal(s.withDuplicates, 0, 'the model gateway billed each key once');
    assert.ok(s.saved['model.complete'] > s.points, `calls saved: ${JSON.stringify(s.saved)}`);
    assert.ok(
      r.report.campaigns.some((c: any) => c.point.target === 'corpus.search'),
      'read-only actions have fault points too',
    );
  });

  it('--random N --seed S picks the same points every time: the seeded sample of all points', () => {
    assert.ok(emailPoints.length === 37, 'needs the --points all run above');
    const cwd = tmpDir();
    const args = [path.join(EXAMPLES, 'email-campaign.ts'), '--input', '{"recipients":5}', '--random', '3', '--seed', 'kiwi', '--jobs', '2'];
    const r = rehearse(cwd, args);
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.deepEqual(r.report.selection, { mode: 'random', requested: 3, seed: 'kiwi', available: 37 });
    assert.deepEqual(
      r.report.campaigns.map((c: any) => c.point),
      sample(emailPoints, 3, 'kiwi'),
    );
  });

  it('--depth 2 kills the resume again and still keeps every invariant', () => {
    const cwd = tmpDir();
    const r = rehearse(cwd, [path.join(EXAMPLES, 'order-fulfilment.ts'), '--random', '3', '--seed', 'deep', '--depth', '2', '--jobs', '2']);
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.equal(r.report.depth, 2);
    const twice = r.report.campaigns.filter((c: any) => c.kills.length === 2);
    assert.ok(twice.length >= 1, JSON.stringify(r.report.campaigns.map((c: any) => c.kills)));
    assert.ok(r.report.summary.kills > r.report.summary.points);
  });
});
