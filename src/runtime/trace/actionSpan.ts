// An action's span (a model call's chat, or a tool's execute_tool) under the step it ran in, and the span of its
// compensation under the attempt that compensated it.

import type { ActionRow } from '../store';
import type { SecretMask } from '../../shared/secrets';
import { MODEL_TYPES, chatAttributes } from './chatSpan';
import type { ActionInfo, SpanContext, TraceSpan } from './spanTypes';

export function actionSpan(
  c: SpanContext,
  act: ActionInfo,
  row: ActionRow | undefined,
  toolCalls: ReadonlyMap<string, string>,
  mask: SecretMask | undefined,
): TraceSpan {
  const type = row?.type ?? act.type ?? 'action';
  const effect = row?.effect ?? act.effect ?? 'unknown';
  const stored = row?.status ?? 'started';
  const inDoubt = stored === 'started' && !c.live(c.facts.attempt);
  const status = inDoubt ? 'in-doubt' : stored;
  const lastAttempt = Math.max(...act.attempts);
  const endMs = row?.ended_at ?? c.attemptEnd(lastAttempt);
  // Built by assignment, in the order the span lists them: conditional spreads made a temporary object each.
  const attrs = c.attrs();
  attrs['logbook.attempt'] = act.attempt;
  attrs['logbook.action.key'] = act.id;
  attrs['logbook.action.effect'] = effect;
  attrs['logbook.action.status'] = status;
  attrs['logbook.replayed'] = false;
  if (row?.reconciliation) attrs['logbook.action.reconciliation'] = row.reconciliation;
  if (row) {
    attrs['logbook.action.executions'] = row.executions;
    attrs['logbook.action.version'] = row.version;
  }
  if (row?.decision) attrs['logbook.action.decision'] = row.decision;
  if (row?.approval) attrs['logbook.action.approval'] = row.approval;
  let name: string;
  if (MODEL_TYPES.has(type)) {
    const chat = chatAttributes(type, row, act.id, mask);
    name = chat.name;
    Object.assign(attrs, chat.attrs);
  } else {
    name = `execute_tool ${type}`;
    attrs['gen_ai.operation.name'] = 'execute_tool';
    attrs['gen_ai.tool.name'] = type;
    attrs['gen_ai.tool.type'] = 'function';
    for (const tc of toolCalls.keys())
      if (act.id.endsWith(`:${tc}`)) {
        attrs['gen_ai.tool.call.id'] = tc;
        break;
      }
  }
  const settled = act.settledIn !== undefined && stored !== 'started' && stored !== 'awaiting-approval';
  return c.span({
    spanId: c.id(`action/${act.id}`),
    parentSpanId: c.id(`step/${act.stepIdx}/${act.attempt}`),
    name,
    kind: MODEL_TYPES.has(type) || effect !== 'read-only' ? 3 : 1,
    startMs: act.start,
    endMs: Math.max(act.start, endMs),
    attributes: attrs,
    events: act.events,
    status:
      stored === 'committed'
        ? { code: 1 }
        : stored === 'failed'
          ? { code: 2, message: 'the action failed' }
          : inDoubt
            ? { code: 2, message: 'in doubt: started, never committed; the next resume reconciles it' }
            : { code: 0 },
    owner: settled ? act.settledIn : undefined,
  });
}

/** The compensation of an action, if the journal has one: its inverse, bracketed like any action. */
export function compensationSpan(c: SpanContext, act: ActionInfo, row: ActionRow | undefined): TraceSpan | undefined {
  const comp = act.comp;
  if (!comp) return undefined;
  const type = row?.type ?? act.type ?? 'action';
  return c.span({
    spanId: c.id(`compensation/${act.id}`),
    parentSpanId: c.id(`attempt/${comp.attempt}`),
    name: `compensate ${type}`,
    kind: 3,
    startMs: comp.start,
    endMs: comp.end ?? c.attemptEnd(comp.attempt),
    attributes: c.attrs({
      'logbook.attempt': comp.attempt,
      'logbook.action.key': act.id,
      'logbook.compensation.status': comp.status,
      'gen_ai.tool.name': type,
    }),
    events: comp.events,
    status: comp.status === 'committed' ? { code: 1 } : comp.status === 'failed' ? { code: 2, message: 'the compensation failed' } : { code: 0 },
    owner: comp.end !== undefined ? comp.attempt : undefined,
  });
}
