// Sending an event to a run (`logbook send`, journal.send, the sidebar, the debugger): keep it in the run's inbox, say
// what the run will do with it, and, for the CLI, continue a run that waited for it.

import { randomUUID } from 'node:crypto';
import { ErrorCodes, LogbookError, runNotFound } from './errors';
import { resumeRun, type EngineOptions } from './engine';
import type { AgentDefinition } from './define';
import type { RunOutcome } from './outcomes';
import type { SendOptions, SendReport, SentBefore } from './sendReport';

export type { SendOptions, SendReport, SentBefore };
import { toJournalJson } from './json';
import { requireWellFormed } from './wellFormed';
import { checkEventName } from './wait';
import { childOfWait } from './childWait';
import { maskedLog, warnSecretFields } from './warnings';
import { processOwner, type InboxRow, type RunRow, type Store } from './store';
import type { RunStatus } from './types';

const MAX_ID = 200;

/** Keeps event `name` with `data` (plain JSON; undefined: none) for run `runId`, and reports what the run will do with it. */
export function sendEvent(store: Store, runId: string, name: unknown, data: unknown, opts: SendOptions = {}): SendReport {
  const what = opts.what ?? 'journal.send';
  checkEventName(name, what);
  if (opts.id !== undefined) {
    if (typeof opts.id !== 'string' || opts.id.length === 0 || opts.id.length > MAX_ID)
      throw new LogbookError(
        ErrorCodes.USAGE,
        `${what}: the dedupe id must be a non-empty string of at most ${MAX_ID} characters.`,
        'Pass the id the event has where it comes from (a webhook delivery id, a message id).',
      );
    requireWellFormed(opts.id, `${what}: the dedupe id`);
  }
  const json = toJournalJson(data, `The data of event ${JSON.stringify(name)}`, 'Send plain JSON: strings, numbers, booleans, null, arrays and plain objects.');
  warnSecretFields(data, 'data', `the data of event ${JSON.stringify(name)}`, maskedLog(opts.log));
  refuseIfChildWaits(store, runId, name);
  const sent = store.sendEvent(runId, { name, id: opts.id ?? randomUUID(), data: json, by: processOwner(opts.role ?? 'api').label });
  const status = store.reader.view(sent.run).effectiveStatus;
  const waitingFor = sent.run.status === 'waiting' || sent.run.status === 'awaiting-approval' ? (sent.run.waiting_for ?? null) : null;
  const base = { runId, name, id: sent.event.id, status, waitingFor };
  if (sent.kind === 'duplicate') {
    const before: SentBefore = { status: sent.event.status, step: sent.event.step_idx, sentAt: sent.event.sent_at, name: sent.event.name };
    const expect = sent.event.status === 'pending' ? expectOf(store, sent.run, sent.event) : { expect: 'taken' as const };
    return { ...base, outcome: 'duplicate', ...expect, before };
  }
  return { ...base, outcome: 'kept', ...expectOf(store, sent.run, sent.event) };
}

/**
 * An event sent to a parent that waits for its child run, which waits for an event of that very name: meant for the
 * child. Kept in the parent, no wait would ever take it; so it is refused, naming the run to send it to.
 */
function refuseIfChildWaits(store: Store, runId: string, name: string): void {
  const row = store.reader.run(runId);
  if (!row || childOfWait(row.waiting_for) === undefined) return;
  const leaf = store.waitingLeaf(row);
  if (!leaf || leaf.event !== name) return;
  throw new LogbookError(
    ErrorCodes.EVENT_REFUSED,
    `Run ${runId} does not wait for event ${JSON.stringify(name)} itself: its child run ${leaf.runId} does, so the event was not kept (nothing was written).`,
    `Send it to the child: \`logbook send ${leaf.runId} ${name}\` (journal.send(${JSON.stringify(leaf.runId)}, …)); that continues ${runId} too.`,
    { runId, status: row.status, name, childRunId: leaf.runId },
  );
}

/** What the run will do with a pending event, from its row as the send found it and the waits its journal holds. */
function expectOf(store: Store, run: RunRow, ev: InboxRow): Pick<SendReport, 'expect' | 'timedOutAt'> {
  if (run.status === 'waiting' && run.waiting_for === ev.name) {
    const deadline = run.wake_at ?? null;
    return deadline !== null && ev.sent_at > deadline ? { expect: 'late', timedOutAt: deadline } : { expect: 'waiting-now' };
  }
  const timedOut = store.reader.inbox.lastTimeout(run.id, ev.name);
  return timedOut === undefined ? { expect: 'later' } : { expect: 'late', timedOutAt: timedOut };
}

/** The words `logbook send` prints for a report (the JSON form is the report itself). */
export function sendReportLine(r: SendReport): string {
  const ev = `event ${JSON.stringify(r.name)} (id ${r.id})`;
  const when = (t: number | undefined): string => (t === undefined ? '' : ` at ${new Date(t).toISOString()}`);
  if (r.outcome === 'duplicate') {
    const b = r.before;
    const fate =
      b?.status === 'delivered'
        ? `delivered to the wait at step #${(b.step ?? 0) + 1}`
        : b?.status === 'refused'
          ? `refused by the schema of the wait at step #${(b.step ?? 0) + 1}`
          : 'kept, not taken yet';
    return `${ev} was already sent to run ${r.runId}${when(b?.sentAt)} (${fate}): nothing was written`;
  }
  switch (r.expect) {
    case 'waiting-now':
      return `sent ${ev} to run ${r.runId}: it waits for it now`;
    case 'late':
      return `sent ${ev} to run ${r.runId} too late: its wait for ${JSON.stringify(r.name)} timed out${when(r.timedOutAt)}, before the event came. It is kept, and taken only if the run waits for ${JSON.stringify(r.name)} again`;
    default: {
      if (r.status === 'running')
        return `sent ${ev} to run ${r.runId}: it is running, and its session takes the event when it reaches run.waitFor(${JSON.stringify(r.name)}) (at once if it waits there now)`;
      const now = r.waitingFor === null ? `it is ${r.status}` : `it waits for ${JSON.stringify(r.waitingFor)}`;
      return `sent ${ev} to run ${r.runId}: ${now}, not for this event. It is kept until the run reaches run.waitFor(${JSON.stringify(r.name)}); if it never does, \`logbook show ${r.runId}\` lists it as not delivered`;
    }
  }
}

/** What `logbook send` did after keeping the event: resumed the run here, left it to the session that holds it, or neither. */
export type Continued =
  | { readonly how: 'resumed'; readonly outcome: RunOutcome }
  | { readonly how: 'held'; readonly owner: string | null }
  | { readonly how: 'not-waiting'; readonly status: RunStatus };

/**
 * Continues a run that waits for the event just sent, in this process. A run another session holds takes the event
 * itself (its wait reads the inbox, or records that it waits only if no event is pending: RunWriter.waiting), so it is
 * left to it, as when that session (a worker, a racing resume) takes the lease first.
 */
export async function continueAfterSend(store: Store, agentOf: (name: string) => AgentDefinition, r: SendReport, opts: EngineOptions): Promise<Continued> {
  const row = store.reader.run(r.runId);
  if (!row) throw runNotFound(r.runId);
  const waitsForIt = (x: RunRow): boolean => x.status === 'waiting' && x.waiting_for === r.name;
  const view = store.reader.view(row);
  if (view.leaseLive) return { how: 'held', owner: row.lease_owner };
  if (!waitsForIt(row)) return { how: 'not-waiting', status: view.effectiveStatus };
  // A child whose parents wait for it: the outermost of them is resumed, which resumes the child in this process, so
  // the event continues the whole chain (a child resumed alone would leave its parent waiting for nobody).
  const top = waitingAncestor(store, row);
  return continueRun(store, () => agentOf(top.agent), top.id, {
    ...opts,
    stillThere: () => {
      const now = store.reader.run(r.runId);
      return now === undefined || waitsForIt(now);
    },
  });
}

/**
 * Resumes a run this process just gave what it waited for (an event, an approval). Another driver may take the lease
 * first (a racing resume, a worker): then its session takes what was sent, and this one reports who holds the run; or
 * it has already moved the run on (`stillThere` says no), and this one says where the run is now instead of failing.
 */
export async function continueRun(
  store: Store,
  agentOf: () => AgentDefinition,
  runId: string,
  opts: EngineOptions & { readonly stillThere: () => boolean },
): Promise<Continued> {
  const { stillThere, ...engine } = opts;
  try {
    return { how: 'resumed', outcome: await resumeRun(store, agentOf(), runId, engine) };
  } catch (err) {
    if (!(err instanceof LogbookError)) throw err;
    if (err.code === ErrorCodes.LEASE_HELD) return { how: 'held', owner: store.reader.run(runId)?.lease_owner ?? null };
    if (err.code !== ErrorCodes.RUN_NOT_RESUMABLE || stillThere()) throw err;
    const now = store.reader.run(runId);
    if (now) return { how: 'not-waiting', status: store.reader.view(now).effectiveStatus };
    throw err;
  }
}

/** The outermost run that waits, through its children, for `row`; `row` itself when its parent does not wait for it. */
function waitingAncestor(store: Store, row: RunRow): RunRow {
  let at = row;
  for (let depth = 0; depth < 64 && at.parent_id; depth++) {
    const up = store.reader.run(at.parent_id);
    if (!up || up.status !== 'waiting' || childOfWait(up.waiting_for) !== at.id || store.reader.view(up).leaseLive) break;
    at = up;
  }
  return at;
}
