// The pure mapping (runtime/trace/spans.ts) on journals written by hand: each attempt's automatic export sends each span
// once across the run (with a negative control: a naive exporter's duplicates are caught), and the W3C context rules.

import { strict as assert } from 'node:assert';
import type { RunFacts } from '../../src/runtime/runFacts';
import type { ActionRow, EventRow } from '../../src/runtime/store';
import { killedAttempts, mapRun, parseTraceparent, runTraceId, spansOfAttempt, type TraceSpan } from '../../src/runtime/trace/spans';

const facts = (over: Partial<RunFacts> = {}): RunFacts => ({
  id: 'r',
  agent: 'a',
  status: 'completed',
  storedStatus: 'completed',
  interruptedWhile: undefined,
  attempt: 3,
  script: 's.ts',
  scriptVersion: null,
  input: {},
  output: null,
  error: null,
  createdAt: 1000,
  updatedAt: 1100,
  leaseLive: false,
  owner: null,
  leaseEpoch: 3,
  forkedFrom: null,
  damaged: [],
  cancel: null,
  ...over,
});

let seq = 0;
const ev = (attempt: number, at: number, kind: string, step: number | null = null, action: string | null = null, data?: unknown): EventRow => ({
  seq: ++seq,
  run_id: 'r',
  attempt,
  at,
  kind,
  step_idx: step,
  action_id: action,
  data: data === undefined ? null : JSON.stringify(data),
});

const action = (id: string, step: number, over: Partial<ActionRow> = {}): ActionRow => ({
  run_id: 'r',
  id,
  seq: step + 1,
  step_idx: step,
  type: 'x.send',
  version: 1,
  effect: 'non-idempotent',
  args: '{}',
  status: 'committed',
  result: '{}',
  error: null,
  executions: 1,
  reconciliation: null,
  decision: null,
  approval: null,
  approval_note: null,
  compensation: null,
  compensation_result: null,
  compensation_executions: 0,
  attempt: 1,
  started_at: 0,
  ended_at: null,
  commit_seq: null,
  ...over,
});

/** Attempt 1 killed in step 1's action; attempt 2 reconciles it and stops for an approval; attempt 3 finishes. */
function journal(): { events: EventRow[]; actions: ActionRow[] } {
  seq = 0;
  const events = [
    ev(1, 1000, 'run.started'),
    ev(1, 1001, 'step.started', 0, null, { name: 'first' }),
    ev(1, 1002, 'action.started', 0, 'k0', { type: 'x.send', effect: 'non-idempotent' }),
    ev(1, 1003, 'action.committed', 0, 'k0'),
    ev(1, 1004, 'step.completed', 0),
    ev(1, 1005, 'step.started', 1, null, { name: 'second' }),
    ev(1, 1006, 'action.started', 1, 'k1', { type: 'x.send', effect: 'non-idempotent' }),
    ev(2, 1010, 'run.lease-acquired', null, null, { purpose: 'resume' }),
    ev(2, 1011, 'step.restarted', 1, null, { name: 'second' }),
    ev(2, 1012, 'action.started', 1, 'k1', { reconciliation: 'verified' }),
    ev(2, 1013, 'action.verified', 1, 'k1', { reconciliation: 'verified' }),
    ev(2, 1014, 'action.awaiting-approval', 1, 'k2', { type: 'x.send' }),
    ev(2, 1015, 'run.awaiting-approval'),
    ev(3, 1020, 'action.approved', 1, 'k2'),
    ev(3, 1021, 'action.started', 1, 'k2', {}),
    ev(3, 1022, 'action.committed', 1, 'k2'),
    ev(3, 1023, 'step.completed', 1),
    ev(3, 1024, 'run.completed', null, null, { stats: { stepsReplayed: 1, actionsSkipped: 1 } }),
  ];
  const actions = [
    action('k0', 0, { started_at: 1002, ended_at: 1003 }),
    action('k1', 1, { reconciliation: 'verified', started_at: 1006, ended_at: 1013 }),
    action('k2', 1, { approval: 'approved', started_at: 1014, ended_at: 1022, attempt: 3 }),
  ];
  return { events, actions };
}

/** What each attempt's automatic export sends, each mapped from the journal as it stood when that attempt ended. */
function union(exportOf: (spans: readonly TraceSpan[], n: number) => readonly TraceSpan[]): TraceSpan[] {
  const { events, actions } = journal();
  const asOf: Record<number, { facts: RunFacts; actions: ActionRow[] }> = {
    2: {
      facts: facts({ status: 'awaiting-approval', storedStatus: 'awaiting-approval', attempt: 2 }),
      actions: [actions[0], actions[1], action('k2', 1, { status: 'awaiting-approval', approval: 'pending', ended_at: null })].filter((a) => a !== undefined),
    },
    3: { facts: facts(), actions },
  };
  const sent: TraceSpan[] = [];
  for (const n of [2, 3]) {
    const at = asOf[n];
    if (!at) continue;
    const spans = mapRun(
      at.facts,
      events.filter((e) => e.attempt <= n),
      at.actions,
    );
    sent.push(...exportOf(spans, n));
  }
  return sent;
}

const duplicates = (sent: readonly TraceSpan[]): string[] => {
  const seen = new Set<string>();
  return sent.filter((s) => (seen.has(s.spanId) ? true : (seen.add(s.spanId), false))).map((s) => s.name);
};

describe('trace mapping (pure)', () => {
  it("the attempts' automatic exports send every span exactly once; a naive exporter is caught (negative control)", () => {
    const { events, actions } = journal();
    const spans = mapRun(facts(), events, actions);
    // Attempt 1 was killed: it sent nothing; attempts 2 and 3 each send theirs.
    const sent = union((all, n) => spansOfAttempt(all, killedAttempts(all), n));
    assert.deepEqual(duplicates(sent), []);
    assert.deepEqual(new Set(sent.map((s) => s.spanId)), new Set(spans.map((s) => s.spanId)), 'and none is lost');
    // Each attempt sending everything it can see: the same check finds the spans sent twice.
    const naive = union((all) => all);
    assert.ok(duplicates(naive).length > 0, 'the duplicate check can fail');
    const [k1] = spans.filter((s) => s.attributes['logbook.action.key'] === 'k1');
    assert.deepEqual(
      k1?.events.map((e) => e.name),
      ['logbook.in_doubt', 'logbook.reconciliation', 'logbook.reconciled'],
    );
    assert.equal(k1.owner, 2, 'sent by the attempt that settled it');
    const k2 = spans.find((s) => s.attributes['logbook.action.key'] === 'k2');
    assert.deepEqual(
      k2?.events.map((e) => e.name),
      ['logbook.approval', 'logbook.approval'],
    );
    assert.equal(spans.find((s) => s.name === 'resume a #3')?.attributes['logbook.replayed.steps'], 1);
  });

  it('ids are the same at every mapping; an unsettled action is sent only by `logbook traces`', () => {
    const { events, actions } = journal();
    const cut = events.slice(0, 7); // attempt 1 killed with k1 started
    const open = mapRun(facts({ status: 'interrupted', storedStatus: 'running', attempt: 1 }), cut, [action('k0', 0), action('k1', 1, { status: 'started' })]);
    const done = mapRun(facts(), events, actions);
    const id = (list: readonly TraceSpan[], key: string): string | undefined => list.find((s) => s.attributes['logbook.action.key'] === key)?.spanId;
    assert.equal(id(open, 'k1'), id(done, 'k1'));
    const k1 = open.find((s) => s.attributes['logbook.action.key'] === 'k1');
    assert.equal(k1?.attributes['logbook.action.status'], 'in-doubt');
    assert.equal(k1.owner, undefined);
    assert.equal(k1.endMs, 1006, 'ended at the last time the journal knows of its attempt');
    assert.equal(open[0]?.owner, undefined, 'the run span waits for the end of the run');
    assert.ok(done.every((s) => s.traceId === runTraceId('r')));
  });

  it('a journaled caller context sets the trace and the run span parent; a malformed one is ignored', () => {
    const { events, actions } = journal();
    const ctx = ev(0, 999, 'trace.context', null, null, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'v=1' });
    const spans = mapRun(facts(), [ctx, ...events], actions);
    assert.ok(spans.every((s) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736' && s.traceState === 'v=1'));
    assert.equal(spans[0]?.parentSpanId, '00f067aa0ba902b7');
    for (const bad of ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'junk', ''])
      assert.equal(parseTraceparent(bad), undefined, bad);
    const ignored = mapRun(facts(), [ev(0, 999, 'trace.context', null, null, { traceparent: 'junk' }), ...events], actions);
    assert.equal(ignored[0]?.parentSpanId, undefined);
    assert.equal(ignored[0]?.traceId, runTraceId('r'));
  });
});
