// Builds a run's timeline from its event log: spans of steps and actions per attempt, and marks for crashes and resumes.

import type { Store } from '../runtime/store';
import type { RunDto, Timeline, TimelineItem, TimelineMark } from './readerProtocol';
import { quietGaps, scaleOf, xAt, type Scale } from './timeScale';
import { aiCallLine, aiCallSummary } from '../ai/view';

/** Enough for any run a person reads on one screen; larger runs are cut and say so. */
const MAX_EVENTS = 50_000;
const MAX_ITEMS = 5_000;

const ACTION_ENDS: Record<string, string> = {
  'action.committed': 'committed',
  'action.verified': 'verified',
  'action.verified-absent': 'committed',
  'action.re-executed': 're-executed',
  'action.decided-happened': 'decided happened',
  'action.decided-not-happened': 'committed',
  'action.failed': 'failed',
  // Execute threw an error that does not prove nothing happened: the bar ends, the action stays in doubt.
  'action.in-doubt': 'in doubt after an error',
  'action.rejected': 'rejected',
};

function dataOf(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function buildTimeline(store: Store, run: RunDto): Timeline {
  const items: TimelineItem[] = [];
  const marks: TimelineMark[] = [];
  const attempts = new Map<number, { attempt: number; start: number; end: number; outcome: string; times: number[] }>();
  const open = new Map<string, TimelineItem>();
  const types = new Map<string, string>();
  const reconMarked = new Set<string>();
  let truncated = false;
  let after = 0;
  let seen = 0;
  const typeOf = (id: string): string => {
    let t = types.get(id);
    if (t === undefined) {
      t = store.reader.action(run.id, id)?.type ?? 'action';
      types.set(id, t);
    }
    return t;
  };
  const push = (item: TimelineItem): void => {
    if (items.length >= MAX_ITEMS) {
      truncated = true;
      return;
    }
    items.push(item);
    open.set(`${item.kind}:${item.id}`, item);
  };
  const close = (key: string, at: number, status: string): void => {
    const item = open.get(key);
    if (!item) return;
    item.end = at;
    item.status = status;
    open.delete(key);
  };
  for (;;) {
    const page = store.reader.events(run.id, after, 2000);
    for (const e of page) {
      seen++;
      const d = dataOf(e.data);
      let a = attempts.get(e.attempt);
      if (!a) {
        // A new attempt: whatever the previous one left open was cut off by its end (a crash or a stop).
        for (const [key, item] of open) {
          const prev = attempts.get(item.attempt);
          item.end = prev?.end ?? item.start;
          item.status = item.kind === 'action' ? (item.status === 'compensating' ? 'compensation in doubt' : 'in-doubt') : 'interrupted';
          open.delete(key);
        }
        a = { attempt: e.attempt, start: e.at, end: e.at, outcome: 'interrupted', times: [] };
        attempts.set(e.attempt, a);
        if (e.attempt > 1)
          marks.push({ at: e.at, attempt: e.attempt, kind: 'resume', label: `attempt ${e.attempt}: ${typeof d.purpose === 'string' ? d.purpose : 'resume'}` });
        else marks.push({ at: e.at, attempt: 1, kind: 'start', label: 'run started' });
      }
      a.end = Math.max(a.end, e.at);
      a.times.push(e.at);
      const stepKey = `step:${e.step_idx ?? -1}`;
      if (e.kind === 'step.started' || e.kind === 'step.restarted') {
        close(stepKey, e.at, 'interrupted');
        push({
          kind: 'step',
          id: String(e.step_idx),
          stepIdx: e.step_idx ?? -1,
          label: typeof d.name === 'string' ? d.name : `step ${e.step_idx}`,
          attempt: e.attempt,
          start: e.at,
          end: null,
          status: 'in-progress',
        });
      } else if (e.kind === 'step.completed' || e.kind === 'step.failed') {
        close(stepKey, e.at, e.kind === 'step.completed' ? 'completed' : 'failed');
      } else if (e.action_id && e.kind === 'action.started') {
        if (typeof d.type === 'string') types.set(e.action_id, d.type);
        close(`action:${e.action_id}`, e.at, 'interrupted');
        push({
          kind: 'action',
          id: e.action_id,
          stepIdx: e.step_idx ?? -1,
          label: typeOf(e.action_id),
          attempt: e.attempt,
          start: e.at,
          end: null,
          status: 'in-flight',
        });
        if (typeof d.reconciliation === 'string') {
          marks.push({ at: e.at, attempt: e.attempt, kind: 'reconciled', label: `${typeOf(e.action_id)} ${d.reconciliation}` });
          reconMarked.add(`${e.attempt}:${e.action_id}`);
        }
      } else if (e.action_id && e.kind === 'action.awaiting-approval') {
        push({
          kind: 'action',
          id: e.action_id,
          stepIdx: e.step_idx ?? -1,
          label: typeOf(e.action_id),
          attempt: e.attempt,
          start: e.at,
          end: e.at,
          status: 'awaiting-approval',
        });
        open.delete(`action:${e.action_id}`);
        marks.push({ at: e.at, attempt: e.attempt, kind: 'approval', label: `${typeOf(e.action_id)} awaits approval` });
      } else if (e.action_id && (e.kind === 'action.approved' || e.kind === 'action.rejected')) {
        marks.push({ at: e.at, attempt: e.attempt, kind: 'approval', label: `${typeOf(e.action_id)} ${e.kind.slice(7)}` });
      } else if (e.action_id && e.kind === 'action.decided') {
        marks.push({ at: e.at, attempt: e.attempt, kind: 'decided', label: `${typeOf(e.action_id)} decided ${String(d.decision)}` });
      } else if (e.action_id && e.kind in ACTION_ENDS) {
        const status = ACTION_ENDS[e.kind] ?? 'committed';
        if (!open.has(`action:${e.action_id}`) && d.readOnly === true) {
          push({
            kind: 'action',
            id: e.action_id,
            stepIdx: e.step_idx ?? -1,
            label: typeOf(e.action_id),
            attempt: e.attempt,
            start: e.at,
            end: null,
            status: 'in-flight',
          });
        }
        close(`action:${e.action_id}`, e.at, status);
        if (e.kind !== 'action.committed' && e.kind !== 'action.failed' && e.kind !== 'action.in-doubt' && !reconMarked.has(`${e.attempt}:${e.action_id}`))
          marks.push({ at: e.at, attempt: e.attempt, kind: 'reconciled', label: `${typeOf(e.action_id)} ${status}` });
      } else if (e.action_id && e.kind.startsWith('compensation.')) {
        const phase = e.kind.slice('compensation.'.length);
        const key = `action:undo ${e.action_id}`;
        if (phase === 'started') {
          push({
            kind: 'action',
            id: `undo ${e.action_id}`,
            stepIdx: e.step_idx ?? -1,
            label: `undo ${typeOf(e.action_id)}`,
            attempt: e.attempt,
            start: e.at,
            end: null,
            status: 'compensating',
          });
        } else if (phase === 'committed' || phase === 'failed') {
          close(key, e.at, phase === 'committed' ? 'compensated' : 'compensation-failed');
        } else if (phase === 'irreversible') {
          marks.push({ at: e.at, attempt: e.attempt, kind: 'compensation', label: `${typeOf(e.action_id)} irreversible` });
        }
      } else if (e.kind.startsWith('run.') && e.kind !== 'run.started' && e.kind !== 'run.lease-acquired') {
        const outcome = e.kind.slice(4);
        a.outcome = outcome;
        marks.push({ at: e.at, attempt: e.attempt, kind: 'end', label: outcome });
      }
    }
    const last = page[page.length - 1];
    if (!last || page.length < 2000) break;
    after = last.seq;
    if (seen >= MAX_EVENTS) {
      truncated = true;
      break;
    }
  }
  // Spans still open belong to an attempt that stopped: a crash (or, for the last attempt, work in progress).
  const lastAttempt = Math.max(0, ...attempts.keys());
  for (const item of open.values()) {
    const a = attempts.get(item.attempt);
    const live = item.attempt === lastAttempt && run.leaseLive;
    if (live) continue;
    item.end = a?.end ?? item.start;
    item.status = item.kind === 'action' ? (item.status === 'compensating' ? 'compensation in doubt' : 'in-doubt') : 'interrupted';
  }
  for (const a of attempts.values()) {
    const live = a.attempt === lastAttempt && run.leaseLive;
    if (a.outcome === 'interrupted' && !live)
      marks.push({ at: a.end, attempt: a.attempt, kind: 'crash', label: `attempt ${a.attempt} stopped here (crash or kill)` });
    if (live) a.outcome = 'running';
  }
  marks.sort((x, y) => x.at - y.at);
  labelAiCalls(store, run.id, items);
  const scaled = [...attempts.values()]
    .sort((x, y) => x.attempt - y.attempt)
    .map(({ times, ...a }): typeof a & { scale: Scale } => {
      // Time in which nothing was journaled (a debugger pause, a slow effect) would squeeze the work to a sliver.
      const end = Math.max(a.end, ...items.filter((i) => i.attempt === a.attempt).map((i) => i.end ?? i.start));
      const scale = scaleOf(a.start, end, quietGaps([a.start, ...times, end]));
      for (const i of items) {
        if (i.attempt !== a.attempt) continue;
        i.x0 = xAt(scale.segments, i.start);
        i.x1 = xAt(scale.segments, i.end ?? i.start);
      }
      for (const m of marks) if (m.attempt === a.attempt) m.x = xAt(scale.segments, m.at);
      return { ...a, scale };
    });
  return { run, attempts: scaled, items, marks, truncated };
}

/** Model and tool calls (agent-logbook/ai) say on their bar what they were: the model and its tokens, or tool(input). */
function labelAiCalls(store: Store, runId: string, items: TimelineItem[]): void {
  for (const item of items) {
    if (item.kind !== 'action' || item.id.startsWith('undo ')) continue;
    if (!item.label.startsWith('model.') && !item.label.startsWith('tool.') && !item.label.startsWith('mcp.')) continue;
    const row = store.reader.action(runId, item.id);
    const s = row && aiCallSummary(row.type, row.args, row.result);
    if (!s) continue;
    const took = item.end !== null ? ` · ${item.end - item.start} ms` : '';
    if (s.kind === 'model') {
      item.label = `${item.id} ${s.name}${s.tokens ? ` ${s.tokens.input}→${s.tokens.output}` : ''}`;
      const lines = [aiCallLine(s) + took, ...s.lastMessages.map((m) => `  ${m}`), ...(s.toolCalls.length ? [`tool calls: ${s.toolCalls.join(', ')}`] : [])];
      item.detail = lines.join('\n');
    } else {
      item.label = `${s.name}`;
      item.detail = aiCallLine(s) + took;
    }
  }
}
