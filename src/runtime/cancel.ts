// Cancelling a run for the CLI and the host API: ask (the store cancels at once, or tells the live holder), then wait for the stop.

import { ErrorCodes, LogbookError, runNotFound } from './errors';
import { compensateRun } from './compensate';
import { canCancel } from './policy';
import { processOwner, type CancelRequest, type CancelResult, type Store } from './store';
import { requireWellFormed } from './wellFormed';
import type { CancelOptions, CancelReport } from './cancelOptions';

export type { CancelOptions, CancelReport };

/**
 * Cancels a run (see JournalStore.cancelRun). With `compensate`, a run cancelled at once is compensated here (the
 * caller has loaded its action definitions); a live one compensates itself after it stops, and if its process dies
 * first, the wait cancels and compensates it here. Refused (LB_RUN_NOT_CANCELLABLE, nothing written) once the run ended.
 */
export async function cancelRunAndWait(store: Store, runId: string, opts: CancelOptions = {}): Promise<CancelReport> {
  if (opts.reason !== undefined) requireWellFormed(opts.reason, 'The reason of the cancel');
  const reason = opts.reason ?? null;
  const req: CancelRequest = { reason, compensate: opts.compensate === true, at: Date.now(), by: processOwner(opts.role ?? 'cli').label };
  const first = store.cancelRun(runId, req);
  const children = first.children.length ? { children: first.children } : {};
  const pollMs = opts.pollMs ?? 100;
  if (opts.wait === false && first.kind === 'requested') return { runId, how: 'requested', status: first.status, reason, ...children };
  const report = await stopped(store, runId, req, first, pollMs);
  // Its children asked to stop (run.child) stop at their next boundary too: waited for, so none is still going.
  if (opts.wait !== false) await childrenStopped(store, first.children, pollMs);
  return { ...report, ...children };
}

async function childrenStopped(store: Store, children: CancelResult['children'], pollMs: number): Promise<void> {
  for (const c of children) {
    if (c.how !== 'requested') continue;
    for (;;) {
      const row = store.reader.run(c.runId);
      if (!row || !store.reader.view(row).leaseLive) break;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

async function stopped(store: Store, runId: string, req: CancelRequest, first: CancelResult, pollMs: number): Promise<CancelReport> {
  const reason = req.reason;
  if (first.kind === 'cancelled') return finish(store, runId, req, 'at-once');
  for (;;) {
    await new Promise((r) => setTimeout(r, pollMs));
    const row = store.reader.run(runId);
    if (!row) throw runNotFound(runId);
    const view = store.reader.view(row);
    if (view.leaseLive) continue;
    if (row.status === 'cancelled') return finish(store, runId, req, 'at-boundary');
    // Stopped and then compensated by its own process (needs-decision: an inverse's doubt waits for a person), or ended
    // by its declared policy's compensation before it saw the cancel.
    const ended = row.status === 'compensated' || row.status === 'compensation-failed';
    if (ended || (row.status === 'needs-decision' && hasCancelled(store, runId)))
      return { runId, how: hasCancelled(store, runId) ? 'at-boundary' : 'finished-first', status: view.effectiveStatus, reason };
    if (row.status === 'completed') return { runId, how: 'finished-first', status: 'completed', reason };
    // Its holder stopped another way before its next boundary (failed, a decision, an approval), or died: cancelled now.
    if (canCancel(row.status)) {
      const again = store.cancelRun(runId, req);
      if (again.kind === 'cancelled') return finish(store, runId, req, 'at-once');
      continue;
    }
    if (row.status === 'compensating') continue; // an interrupted compensation: finished by finish() below
    return { runId, how: 'at-boundary', status: view.effectiveStatus, reason };
  }
}

function hasCancelled(store: Store, runId: string): boolean {
  return store.reader.events(runId).some((e) => e.kind === 'run.cancelled');
}

async function finish(store: Store, runId: string, req: CancelRequest, how: CancelReport['how']): Promise<CancelReport> {
  if (!req.compensate) return { runId, how, status: 'cancelled', reason: req.reason };
  for (;;) {
    try {
      const compensation = await compensateRun(store, runId);
      return { runId, how, status: compensation.status, reason: req.reason, compensation };
    } catch (err) {
      // Its own process is compensating it (it stopped, then took the lease again to compensate): wait for that.
      if (!(err instanceof LogbookError) || err.code !== ErrorCodes.LEASE_HELD) throw err;
      await new Promise((r) => setTimeout(r, 100));
      const row = store.reader.run(runId);
      if (row && row.status !== 'cancelled' && row.status !== 'compensating')
        return { runId, how, status: store.reader.view(row).effectiveStatus, reason: req.reason };
    }
  }
}
