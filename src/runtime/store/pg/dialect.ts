// What PostgreSQL's SQL says differently from SQLite's, for the store interface (see store/db.ts).

import type { Dialect } from '../db';
import { PG_NOW } from './threadProtocol';

export const PG_DIALECT: Dialect = {
  indexedBy: () => '',
  claimLock: ' FOR UPDATE SKIP LOCKED',
  forUpdate: ' FOR UPDATE',
  returningSeq: ' RETURNING seq',
  seqsCanRepeat: false,
  foldsRows: false,
  // currval is this session's own last value of the identity's sequence: the event just inserted, whatever other sessions insert.
  lastEventSeq: "currval(pg_get_serial_sequence('events', 'seq'))",
  insertOrder: 'run_seq',
  renewLease: `UPDATE runs SET updated_at = ?, lease_expires = ${PG_NOW} + ? WHERE id = ? AND lease_token = ? AND lease_epoch = ?`,
  renewParams: (now, ttlMs, runId, token, epoch) => [now, ttlMs, runId, token, epoch],
  // Deleting a run writes no event, so the run count joins the newest event's seq.
  dataVersion: "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events)::text || ':' || (SELECT COUNT(*) FROM runs)::text",
  leaseByExpiry: true,
  notJson: null,
  notText: null,
  // Rows come from the PG thread as arrays already; packing them would add a JSON text on both sides of the hop.
  packRows: null,
};

/** A writer's fence inside its transactions (PgDb.fence): renewLease as a function (PG migration 9), with its parameters. */
export const FENCE_SQL = 'SELECT logbook_fence(?, ?, ?, ?, ?)';
