// A person decides an in-doubt AI tool call: with the result it had (--result, the host API), or the documented "not recorded".

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAction, defineAgent, openJournal } from '../../src/runtime/public';
import { logbookModel, logbookTools, type ToolCallContext } from '../../src/ai';
import { FIXTURES, cli, cliJson, fileHash, show, tmpDir } from '../helpers';
import { brokenSummary, rehearse } from '../rehearse/util';
import { scriptedModel, text, toolCall } from './mock';

const SCRIPT = path.join(FIXTURES, 'ai-charge.ts');
const NOT_RECORDED = { happened: true, result: 'not recorded', note: 'A person confirmed this call happened; its result was not recorded.' };

const charges = (dir: string): Array<{ key: string; chargeId: string }> =>
  fs.existsSync(path.join(dir, 'charges.json')) ? JSON.parse(fs.readFileSync(path.join(dir, 'charges.json'), 'utf8')) : [];

/** The value the model was handed for the charge: the tool result in the prompt of the call after it. */
function toolResultSeen(dir: string, runId: string): unknown {
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
  try {
    const row = db.prepare("SELECT args FROM actions WHERE run_id = ? AND id = 'model:1.2'").get(runId) as { args: string } | undefined;
    const prompt =
      (JSON.parse(row?.args ?? '{}') as { params?: { prompt?: Array<{ role: string; content: Array<{ type: string; output?: { value?: unknown } }> }> } })
        .params?.prompt ?? [];
    return prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).find((p) => p.type === 'tool-result')?.output?.value;
  } finally {
    db.close();
  }
}

/** A run killed right after the charge went out, before the journal recorded it: in doubt, no verify. */
function killedAfterCharge(dir: string, runId: string): void {
  const killed = cli(dir, ['run', SCRIPT, '--run-id', runId, '--crash-at', 'tool.charge#1@after-execute']);
  assert.equal(killed.signal, 'SIGKILL', killed.stderr);
  const stopped = cliJson(dir, ['resume', runId]);
  assert.equal(stopped.json.status, 'needs-decision', stopped.stderr);
  assert.deepEqual(
    charges(dir).map((c) => c.chargeId),
    ['ch_1'],
  );
}

describe('ai: deciding an in-doubt tool call', function () {
  this.timeout(300_000);

  it('--decide <key>=happened --result JSON: the model gets that result, says what an uncrashed run says, and the decision is journaled with it', () => {
    const base = tmpDir('logbook-decide-');
    const uncrashed = cliJson(base, ['run', SCRIPT, '--run-id', 'c']);
    assert.equal(uncrashed.json.output, 'Your card was charged (ch_1).');
    const dir = tmpDir('logbook-decide-');
    killedAfterCharge(dir, 'c');
    const r = cliJson(dir, ['resume', 'c', '--decide', 'charge:c=happened', '--result', '{"chargeId":"ch_1","amount":1250}']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.output, uncrashed.json.output);
    assert.deepEqual(toolResultSeen(dir, 'c'), { chargeId: 'ch_1', amount: 1250 });
    assert.equal(charges(dir).length, 1, 'charged once');
    const a = (show(dir, 'c').actions as Array<{ id: string; status: string; reconciliation: string; result: unknown; executions: number }>).find(
      (x) => x.id === 'charge:c',
    );
    assert.equal(a?.status, 'committed');
    assert.equal(a?.reconciliation, 'decided-happened');
    assert.equal(a?.executions, 1);
    const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
    const ev = db.prepare("SELECT data FROM events WHERE run_id = 'c' AND kind = 'action.decided'").get() as { data: string };
    const row = db.prepare("SELECT result FROM actions WHERE run_id = 'c' AND id = 'charge:c'").get() as { result: string };
    db.close();
    assert.deepEqual(JSON.parse(ev.data), { decision: 'happened', result: { chargeId: 'ch_1', amount: 1250 } });
    assert.deepEqual(JSON.parse(row.result), { chargeId: 'ch_1', amount: 1250 });
  });

  it('without --result the model is told the truth (happened, result not recorded), not null', () => {
    const dir = tmpDir('logbook-decide-');
    killedAfterCharge(dir, 'n');
    const r = cliJson(dir, ['resume', 'n', '--decide', 'charge:n=happened']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(toolResultSeen(dir, 'n'), NOT_RECORDED);
    assert.equal(r.json.output, 'Your charge went through; I do not have its reference.');
  });

  it('refuses a --result that is not JSON, or that follows no --decide …=happened, and writes nothing', () => {
    const dir = tmpDir('logbook-decide-');
    killedAfterCharge(dir, 'b');
    const db = path.join(dir, 'journal.db');
    const before = fileHash(db);
    for (const [args, problem] of [
      [['--decide', 'charge:b=happened', '--result', '{chargeId: ch_1}'], /--result for charge:b is not valid JSON/],
      [['--decide', 'charge:b=not-happened', '--result', '{}'], /did not happen has no result/],
      [['--result', '{}'], /follows no such --decide/],
      [['--decide', 'charge:b=happened', '--result', '1', '--result', '2'], /follows no such --decide/],
    ] as const) {
      const r = cli(dir, ['resume', 'b', ...args]);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /LB_USAGE/);
      assert.match(r.stderr, problem);
      assert.equal(fileHash(db), before, `${args.join(' ')} wrote nothing`);
    }
    assert.match(
      cli(dir, ['resume', 'b', '--decide', 'charge:b=happened', '--result', 'nope']).stderr,
      /--result '\{"chargeId": "ch_123"\}'/,
      'the remedy shows how to quote it',
    );
  });

  it('the host API takes { decision, result }, refuses a result the journal cannot hold before writing, and keeps the string form', async () => {
    const dir = tmpDir('logbook-decide-');
    let failNext = true;
    const charged: string[] = [];
    const { model } = scriptedModel((c) => {
      const out = c.prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).find((p) => p.type === 'tool-result')?.output;
      return out ? [text(`done: ${JSON.stringify(out)}`)] : [toolCall('charge', { amount: 5 }, 't1')];
    });
    const agent = defineAgent({
      name: 'api-ai-charge',
      input: z.object({}),
      run: (run) =>
        run.step('pay', async () => {
          const tools = logbookTools(run, {
            charge: {
              tool: tool({
                inputSchema: z.object({ amount: z.number() }),
                execute: () => {
                  charged.push('ch_9');
                  // The request got through and the answer was lost: in doubt, and this tool has no verify.
                  if (failNext) throw new Error('socket hang up');
                  return { chargeId: 'ch_9' };
                },
              }),
              effect: 'non-idempotent',
              key: (_i: unknown, ctx: ToolCallContext) => `charge:${ctx.run.id}`,
            },
          });
          const r = await generateText({
            model: logbookModel(run, model, { reportReplays: false }),
            tools,
            prompt: 'pay',
            stopWhen: stepCountIs(3),
            maxRetries: 0,
          });
          return r.text;
        }),
    });
    const journal = openJournal({ journal: path.join(dir, 'journal.db'), agents: [agent], log: () => undefined });
    try {
      for (const id of ['h', 'w']) {
        await journal.start(agent, {}, { runId: id });
        assert.equal((await journal.resume(id)).status, 'needs-decision');
      }
      failNext = false;
      const events = (): number => {
        const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
        const n = (db.prepare("SELECT count(*) AS n FROM events WHERE run_id = 'h'").get() as { n: number }).n;
        db.close();
        return n;
      };
      const before = events();
      const refusals: Array<[unknown, string, RegExp]> = [
        [{ decision: 'happened', result: new Date(0) }, ErrorCodes.INVALID_ARGS, /result the journal cannot hold: result is a Date.*Nothing was written/],
        [{ decision: 'happened', result: { n: Number.NaN } }, ErrorCodes.INVALID_ARGS, /result\.n is NaN/],
        [{ decision: 'not-happened', result: {} }, ErrorCodes.INVALID_ARGS, /"not-happened" with a result/],
        [{ decision: 'maybe' }, ErrorCodes.BAD_DECISION, /"decision" is "maybe"/],
        [{ decision: 'happened', value: 1 }, ErrorCodes.BAD_DECISION, /"value", which a decision does not/],
        ['yes', ErrorCodes.BAD_DECISION, /is "yes", not "happened" or "not-happened"/],
      ];
      for (const [d, code, message] of refusals) {
        const err = await journal.resume('h', { decisions: { 'charge:h': d as never } }).catch((e: unknown) => e);
        assert.ok(err instanceof LogbookError && err.code === code, `${JSON.stringify(d)}: ${String(err)}`);
        assert.match(err.message, message);
        assert.ok(err.remedy.length > 0);
      }
      assert.equal(events(), before, 'a refused decision writes nothing');
      assert.equal(journal.run('h')?.status, 'needs-decision');
      const decided = await journal.resume('h', { decisions: { 'charge:h': { decision: 'happened', result: { chargeId: 'ch_1' } } } });
      assert.equal(decided.status, 'completed', JSON.stringify(decided.error));
      assert.equal(decided.output, 'done: {"type":"json","value":{"chargeId":"ch_1"}}');
      const word = await journal.resume('w', { decisions: { 'charge:w': 'happened' } });
      assert.equal(word.output, `done: ${JSON.stringify({ type: 'json', value: NOT_RECORDED })}`);
      assert.deepEqual(charged, ['ch_9', 'ch_9'], 'no charge made again by either decision');
    } finally {
      journal.close();
    }
  });

  it('run.do of a plain action decided happened: the given result, else its unrecordedResult, else undefined as before', async () => {
    const dir = tmpDir('logbook-decide-');
    let fail = true;
    const make = (type: string, unrecorded?: () => unknown) =>
      defineAction({
        type,
        version: 1,
        effect: 'non-idempotent',
        args: z.object({}),
        key: (_a, run) => `${type}:${run.id}`,
        execute: () => {
          if (fail) throw new Error('timeout after the request went out');
          return { id: 'fresh' };
        },
        ...(unrecorded ? { unrecordedResult: unrecorded } : {}),
      });
    const plain = make('t.plain');
    const told = make('t.told', () => ({ unknown: true }));
    const none = make('t.none');
    const agent = defineAgent({
      name: 'plain-decide',
      input: z.object({}),
      run: (run) =>
        run.step('pay', async () => {
          const [a, b, c] = [
            await run.do(plain, {}).catch((e: unknown) => e),
            await run.do(told, {}).catch((e: unknown) => e),
            await run.do(none, {}).catch((e: unknown) => e),
          ];
          if ([a, b, c].some((x) => x instanceof Error)) throw new Error('try again later');
          return { a, b, c: c === undefined ? 'undefined' : c };
        }),
    });
    const journal = openJournal({ journal: path.join(dir, 'journal.db'), agents: [agent], log: () => undefined });
    try {
      assert.equal((await journal.start(agent, {}, { runId: 'p' })).status, 'failed');
      fail = false;
      assert.equal((await journal.resume('p')).status, 'needs-decision');
      const out = await journal.resume('p', {
        decisions: { 't.plain:p': { decision: 'happened', result: { id: 'given' } }, 't.told:p': 'happened', 't.none:p': { decision: 'happened' } },
      });
      assert.deepEqual(out.output, { a: { id: 'given' }, b: { unknown: true }, c: 'undefined' });
    } finally {
      journal.close();
    }
    assert.throws(() => defineAction({ ...plain, type: 't.bad', unrecordedResult: 'x' as never }), /"unrecordedResult" must be a function/);
  });

  it('rehearse --points all of an AI agent without verify: every campaign passes, the decisions carrying the result the probe reports', () => {
    const r = rehearse(tmpDir('logbook-decide-'), [SCRIPT, '--points', 'all', '--jobs', '2']);
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.equal(s.sameOutput, s.points);
    assert.equal(s.broken, 0);
    const decisions = (r.report.campaigns as Array<{ decisions: Array<{ decision: string; withResult?: boolean }> }>).flatMap((c) => c.decisions);
    assert.ok(decisions.filter((d) => d.decision === 'happened').length >= 2, JSON.stringify(decisions));
    assert.ok(decisions.filter((d) => d.decision === 'happened').every((d) => d.withResult === true));
  });
});
