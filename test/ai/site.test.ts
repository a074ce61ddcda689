// The tools entry a tool call is shown at: found in the call's own object literal, never in a nested one.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { entrySite } from '../../src/ai/site';
import { tmpDir } from '../helpers';

const SOURCE = `import { logbookTools } from 'agent-logbook/ai';
const other = { refund: 1 };
const tools = logbookTools(run, {
  lookup: { tool: lookup, effect: 'read-only' },
  'tool': { tool: search, effect: 'read-only' },
  refund: { action: refund },
  sendEmail,
});
const one = logbookTools(run, { a: { tool: x, effect: 'idempotent' }, b: y });
`;

describe('ai: the line of a tools entry', () => {
  const file = path.join(tmpDir('logbook-site-'), 'agent.ts');
  before(() => fs.writeFileSync(file, SOURCE));
  const call = { file, line: 3, column: 15 }; // where V8 puts a call: the callee's name

  it('names the entry of each tool, a quoted key and a shorthand one, not an earlier or nested key of that name', () => {
    assert.deepEqual(entrySite(call, 'lookup'), { file, line: 4, column: 3 });
    assert.deepEqual(entrySite(call, 'tool'), { file, line: 5, column: 3 }, 'the key of entry 2, not the nested tool: of entry 1');
    assert.deepEqual(entrySite(call, 'refund'), { file, line: 6, column: 3 }, 'not the refund of line 2, before the call');
    assert.deepEqual(entrySite(call, 'sendEmail'), { file, line: 7, column: 3 });
    assert.deepEqual(entrySite({ file, line: 9, column: 13 }, 'b'), { file, line: 9, column: 71 });
  });

  it('falls back to the call itself when the entry is not written there, or the file cannot be read', () => {
    assert.deepEqual(entrySite(call, 'spreadIn'), call);
    assert.deepEqual(entrySite({ file, line: 9, column: 13 }, 'lookup'), { file, line: 9, column: 13 }, "the search stops at the call's closing parenthesis");
    const gone = { file: path.join(path.dirname(file), 'gone.ts'), line: 1, column: 1 };
    assert.deepEqual(entrySite(gone, 'lookup'), gone);
    assert.equal(entrySite(undefined, 'lookup'), undefined);
  });
});
