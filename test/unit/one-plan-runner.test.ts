// One home for the per-action decisions: only carryOut.ts carries out a reconcile plan, and a session's boundaries go through one call.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

const RUNTIME = path.join(ROOT, 'src', 'runtime');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Lines of `file` matching `re`, as `file:line: text`. */
function hits(file: string, re: RegExp): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, i) => (re.test(line) ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : []));
}

// A switch on how an action is reconciled, or any read of a plan's `how`: deciding by it is carryOut's alone.
const SWITCH_ON_HOW = /switch\s*\(\s*[\w.?]*\bhow\s*\)|\bplan\.(plan\.)?how\b/;
// A fault point, a pause or a stop check written out by hand instead of through AttemptHost.boundary.
const HAND_BOUNDARY = /\bfaults\.hit\(|\bhooks\??\.pause\b|\bpauseAction\(|\bcheckStop\(/;

describe('one plan runner, one boundary', () => {
  it('carryOut.ts is the only runtime file that switches on plan.how (the pattern does find its switch)', () => {
    const carryOut = path.join(RUNTIME, 'carryOut.ts');
    assert.ok(hits(carryOut, SWITCH_ON_HOW).length > 0, 'the pattern no longer matches the switch it guards: update it');
    const elsewhere = sources(RUNTIME)
      .filter((f) => f !== carryOut)
      .flatMap((f) => hits(f, SWITCH_ON_HOW));
    assert.deepEqual(elsewhere, [], 'carry a reconcile plan out through carryOut (src/runtime/carryOut.ts)');
  });

  it('the session and its bracket hit fault points, pause and check for a stop only through the boundary (attemptHost.ts)', () => {
    const host = path.join(RUNTIME, 'attemptHost.ts');
    assert.ok(hits(host, HAND_BOUNDARY).length > 0, 'the pattern no longer matches the boundary it guards: update it');
    const files = ['session.ts', 'bracket.ts', 'carryOut.ts', 'settle.ts', 'apiChecks.ts'].map((f) => path.join(RUNTIME, f));
    assert.deepEqual(
      files.flatMap((f) => hits(f, HAND_BOUNDARY)),
      [],
      'use AttemptHost.boundary',
    );
  });
});
