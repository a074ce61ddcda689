// The engine's one call into tracing: after an attempt, its spans go out from the journal in the background.

import type { Lease, Store } from '../store';
import type { TraceExportConfig } from './config';
import { wantsTraces } from './env';
import { loadExporter } from './load';
import { trackSend } from './pending';

interface TraceOpts {
  readonly traces?: TraceExportConfig | false;
  readonly role?: string;
  readonly log?: (line: string) => void;
}

/** Never throws and never waits: the attempt's outcome is already journaled; the export only reads it. */
export function traceAttempt(store: Store, lease: Lease, opts: TraceOpts): void {
  // Rehearsal's thousands of killed scratch runs are not anyone's trace.
  if (opts.traces === false || opts.role === 'rehearsal') return;
  const log = opts.log ?? ((l: string) => void process.stderr.write(`${l}\n`));
  if (opts.traces === undefined && !wantsTraces(process.env)) return;
  try {
    const cfg = opts.traces ?? loadExporter().traceConfig(process.env, {}, log);
    if (!cfg) return;
    trackSend(loadExporter().exportAttempt(store, lease.runId, lease.attempt, cfg, log).done);
  } catch {
    // exportAttempt reports its own failures (and a missing dist/traces.js is no run's failure): nothing reaches the run.
  }
}

/** traceAttempt once `attempt` settles (a compensation's attempt), whatever it settles to. */
export async function afterAttempt<T>(attempt: Promise<T>, store: Store, lease: Lease, opts: TraceOpts): Promise<T> {
  try {
    return await attempt;
  } finally {
    traceAttempt(store, lease, opts);
  }
}
