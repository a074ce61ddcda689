// Unit tests of JSON-safety paths and crash-spec parsing.

import { strict as assert } from 'node:assert';
import { findNonJson } from '../../src/runtime/json';
import { ErrorCodes, LogbookError, formatCrashSpec, parseCrashSpec } from '../../src/runtime';

describe('json safety', () => {
  it('accepts plain JSON and names the path of the first bad value', () => {
    assert.equal(findNonJson({ a: [1, 'x', null, { b: true }] }), undefined);
    assert.match(findNonJson({ a: { 'odd key': [0, new Set()] } }) ?? '', /^\$\.a\["odd key"\]\[1\] is a Set/);
    assert.match(findNonJson([Infinity]) ?? '', /^\$\[0\] is Infinity/);
    assert.match(findNonJson({ s: Symbol('x') }) ?? '', /\$\.s is a Symbol/);
    const shared = { x: 1 };
    assert.equal(findNonJson({ a: shared, b: shared }), undefined, 'a shared (non-cyclic) object is fine');
  });
});

describe('crash specs', () => {
  it('parses short and prefixed phases', () => {
    assert.deepEqual(parseCrashSpec('email.send#30@after-execute'), { target: 'email.send', occurrence: 30, point: 'action:after-execute' });
    assert.deepEqual(parseCrashSpec('load recipients@step:before'), { target: 'load recipients', occurrence: 1, point: 'step:before' });
    assert.deepEqual(parseCrashSpec('card.charge#2@compensate:after-start'), { target: 'card.charge', occurrence: 2, point: 'compensate:after-start' });
    assert.equal(formatCrashSpec(parseCrashSpec('x#3@action:after-commit')), 'x#3@after-commit');
  });

  it('rejects a malformed spec with the accepted phases in the remedy', () => {
    for (const bad of ['email.send', 'email.send#0@after-start', 'email.send@sometime', '#1@before']) {
      try {
        parseCrashSpec(bad);
        assert.fail(bad);
      } catch (err) {
        assert.ok(err instanceof LogbookError);
        assert.equal(err.code, ErrorCodes.BAD_CRASH_SPEC);
        assert.match(err.message, /e\.g\.|from 1/);
      }
    }
  });
});
