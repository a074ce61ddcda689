// The source index maps journal step names and action types back to the run.step / run.do lines of a script.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentLines, findAction, findStep, indexSource, stepNameRegex } from '../../src/extension/sourceIndex';
import { EXAMPLES } from '../helpers';

describe('source index', () => {
  const text = fs.readFileSync(path.join(EXAMPLES, 'email-campaign.ts'), 'utf8');
  const lines = text.split('\n');
  const index = indexSource(text);

  it('finds the step calls of the example, template names matching the names they produce', () => {
    assert.deepEqual(
      index.steps.map((s) => s.source),
      ['load recipients', 'email ${r.email}'],
    );
    const email = findStep(index, 'email user7@example.com');
    assert.ok(email);
    assert.match(lines[email.line]!, /run\.step\(`email/);
    assert.equal(
      findStep(index, 'load recipients')?.line,
      lines.findIndex((l) => l.includes("run.step('load recipients'")),
    );
    assert.equal(findStep(index, 'no such step'), undefined);
  });

  it('resolves run.do(sendEmail, …) to the action type its defineAction declares', () => {
    assert.deepEqual(
      index.actions.map((a) => a.type),
      ['email.send'],
    );
    const site = findAction(index, 'email.send');
    assert.ok(site);
    assert.match(lines[site.line]!, /run\.do\(sendEmail/);
  });

  it("maps the AI SDK's model calls and logbookTools entries of the support agent to their lines, with the types they journal", () => {
    const ai = fs.readFileSync(path.join(EXAMPLES, 'support-agent.ts'), 'utf8');
    const at = (needle: string): number => ai.split('\n').findIndex((l) => l.includes(needle));
    const found = indexSource(ai).actions.map((a) => [a.type, a.line]);
    assert.deepEqual(found, [
      ['tool.lookupOrder', at('lookupOrder: { tool: lookupOrder')],
      ['tool.refund', at('refund: { action: refund')],
      ['tool.sendEmail', at('            sendEmail,')],
      ['model.generate', at('await generateText(')],
      ['model.stream', at('streamText({')],
    ]);
    // A written type wins; a spread declares nothing; a tool nested in an entry is not an entry.
    const own = indexSource("const t = logbookTools(run, { a: { tool: x, type: 'crm.a' }, ...more, b: { tool: { b: 1 } } });").actions;
    assert.deepEqual(
      own.map((a) => a.type),
      ['crm.a', 'tool.b'],
    );
  });

  it('escapes plain names and turns template holes into wildcards', () => {
    assert.equal(stepNameRegex('a.b (c)', "'"), '^a\\.b \\(c\\)$');
    assert.ok(new RegExp(stepNameRegex('pay ${x} now ${y}', '`')).test('pay 5 now later'));
    assert.ok(!new RegExp(stepNameRegex('pay ${x} now', '`')).test('pay 5 later'));
  });

  it('finds the defineAgent( call that makes a file an agent script, and nothing in other code', () => {
    assert.deepEqual(agentLines(text), [lines.findIndex((l) => l.includes('defineAgent({'))]);
    assert.deepEqual(agentLines('const x = 1;\n// defineAgent is imported elsewhere\nexport const y = defineAgents;\n'), []);
    assert.deepEqual(agentLines('\nexport default defineAgent<Input>(\n  { name: "a" });'), [1]);
  });
});
