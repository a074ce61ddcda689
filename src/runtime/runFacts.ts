// A run's row as the domain reads it, once for every surface: the status it shows, its values parsed (damage collected,
// never thrown) and who holds it. The host API gives these as Dates, `logbook ls/show --json` as ISO strings.

import type { LogbookError } from './errors';
import { displayJournalJson, type JournalPlace } from './json';
import { parseCancelRequest, type CancelRequest, type Store } from './store';
import type { RunRow } from './store/rows';
import type { RunStatus, StoredRunStatus } from './types';

type RunColumn = 'input' | 'output' | 'error';

export interface RunFacts {
  readonly id: string;
  readonly agent: string;
  /** `interrupted` when journaled as running (or compensating) and no live process holds it. */
  readonly status: RunStatus;
  readonly storedStatus: StoredRunStatus;
  /** What an interrupted run was doing when its process died. */
  readonly interruptedWhile: 'running' | 'compensating' | undefined;
  readonly attempt: number;
  readonly script: string;
  readonly scriptVersion: string | null;
  /** The journaled values, parsed; undefined when absent or damaged (`damaged` says which). */
  readonly input: unknown;
  readonly output: unknown;
  /** The journaled error record; null when there is none or it is damaged. */
  readonly error: unknown;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly leaseLive: boolean;
  /** The lease's holder while it is live, else null. */
  readonly owner: string | null;
  readonly leaseEpoch: number;
  readonly forkedFrom: { readonly runId: string; readonly step: number | null } | null;
  /** The cancel asked of the run (`logbook cancel`), once one was: its reason, who asked, whether to compensate. */
  readonly cancel: CancelRequest | null;
  /** The values of the row that are not what was written: each with its LB_JOURNAL_INVALID naming the column. */
  readonly damaged: ReadonlyArray<{ readonly column: RunColumn; readonly error: LogbookError }>;
}

export function runFacts(store: Store, row: RunRow): RunFacts {
  const v = store.reader.view(row);
  const damaged: Array<{ column: RunColumn; error: LogbookError }> = [];
  const value = (column: RunColumn): unknown => {
    const text = row[column];
    if (text === null) return undefined;
    const d = displayJournalJson(text, (): JournalPlace => ({ runId: row.id, table: 'runs', column }));
    if (d.ok) return d.value;
    damaged.push({ column, error: d.error });
    return undefined;
  };
  const interrupted = v.effectiveStatus === 'interrupted';
  return {
    id: row.id,
    agent: row.agent,
    status: v.effectiveStatus,
    storedStatus: row.status,
    interruptedWhile: interrupted ? (row.status === 'compensating' ? 'compensating' : 'running') : undefined,
    attempt: row.attempt,
    script: row.script,
    scriptVersion: row.script_version ?? null,
    input: value('input'),
    output: value('output'),
    error: value('error') ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    leaseLive: v.leaseLive,
    owner: v.leaseLive ? row.lease_owner : null,
    leaseEpoch: row.lease_epoch,
    forkedFrom: row.forked_from ? { runId: row.forked_from, step: row.forked_at_step } : null,
    cancel: row.cancel_requested ? parseCancelRequest(row.cancel_requested) : null,
    damaged,
  };
}
