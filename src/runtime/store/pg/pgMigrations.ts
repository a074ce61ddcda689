// The PostgreSQL journal's schema migrations as data: the same versions as SQLite's list, recorded in logbook_schema.

import type { Migration } from '../migrations';
import { FENCE_SQLSTATE } from './inline';
import { PG_NOW } from './threadProtocol';

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'journal: runs, steps, actions, append-only events',
    // Every integer is BIGINT, like SQLite's 64-bit INTEGER (callers bind bounds such as Number.MAX_SAFE_INTEGER);
    // run_seq orders runs created in the same millisecond.
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        run_seq BIGINT GENERATED ALWAYS AS IDENTITY,
        agent TEXT NOT NULL,
        script TEXT NOT NULL,
        input TEXT,
        status TEXT NOT NULL,
        attempt BIGINT NOT NULL,
        output TEXT,
        error TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        lease_token TEXT,
        lease_owner TEXT,
        lease_pid BIGINT,
        lease_pid_start TEXT,
        lease_host TEXT,
        lease_epoch BIGINT NOT NULL DEFAULT 0,
        lease_expires BIGINT,
        forked_from TEXT,
        forked_at_step BIGINT
      );
      CREATE INDEX runs_by_created ON runs(created_at);
      CREATE TABLE steps (
        run_id TEXT NOT NULL,
        idx BIGINT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        attempt BIGINT NOT NULL,
        started_at BIGINT NOT NULL,
        ended_at BIGINT,
        PRIMARY KEY (run_id, idx)
      );
      CREATE TABLE actions (
        run_id TEXT NOT NULL,
        id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        step_idx BIGINT NOT NULL,
        type TEXT NOT NULL,
        version BIGINT NOT NULL,
        effect TEXT NOT NULL,
        args TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        executions BIGINT NOT NULL DEFAULT 0,
        reconciliation TEXT,
        decision TEXT,
        approval TEXT,
        approval_note TEXT,
        compensation TEXT,
        compensation_result TEXT,
        compensation_executions BIGINT NOT NULL DEFAULT 0,
        attempt BIGINT NOT NULL,
        started_at BIGINT NOT NULL,
        ended_at BIGINT,
        commit_seq BIGINT,
        PRIMARY KEY (run_id, id)
      );
      CREATE INDEX actions_by_step ON actions(run_id, step_idx, seq);
      CREATE INDEX actions_by_seq ON actions(run_id, seq);
      CREATE TABLE events (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id TEXT NOT NULL,
        attempt BIGINT NOT NULL,
        at BIGINT NOT NULL,
        kind TEXT NOT NULL,
        step_idx BIGINT,
        action_id TEXT,
        data TEXT
      );
      CREATE INDEX events_by_run ON events(run_id, seq);
    `,
  },
  {
    version: 2,
    name: 'actions in doubt after an error: a partial index, empty unless execute threw an error that proves nothing',
    sql: `
      CREATE INDEX actions_in_doubt_after_error ON actions(run_id, seq) WHERE status = 'started' AND error IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: 'workers: the script version a run needs, the workers seen (for `ls`), and an index of what a worker may claim',
    sql: `
      ALTER TABLE runs ADD COLUMN script_version TEXT;
      CREATE INDEX runs_claimable ON runs(created_at) WHERE status IN ('queued', 'running', 'compensating');
      CREATE TABLE workers (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        agents TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        seen_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'LangGraph checkpoints: checkpoints, channel values by version, pending writes',
    sql: `
      CREATE TABLE graph_checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        type TEXT NOT NULL,
        checkpoint BYTEA NOT NULL,
        metadata_type TEXT NOT NULL,
        metadata BYTEA NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
      );
      CREATE TABLE graph_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        value BYTEA,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
      );
      CREATE TABLE graph_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx BIGINT NOT NULL,
        task_path TEXT NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        value BYTEA,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
      );
    `,
  },
  {
    version: 5,
    name: 'cancel, sleep: a cancel request a live holder reads with its fence, and the wake time of a sleeping run',
    sql: `
      ALTER TABLE runs ADD COLUMN cancel_requested TEXT;
      ALTER TABLE runs ADD COLUMN wake_at BIGINT;
      CREATE INDEX runs_waking ON runs(wake_at) WHERE status = 'sleeping';
    `,
  },
  // 6 is format v2's (another branch): versions are increasing and unique, not contiguous.
  {
    version: 7,
    name: 'events sent to runs (run.waitFor, approvals): the inbox, and the event a waiting run waits for',
    sql: `
      CREATE TABLE inbox (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id TEXT NOT NULL,
        name TEXT NOT NULL,
        id TEXT NOT NULL,
        data TEXT,
        sent_at BIGINT NOT NULL,
        sent_by TEXT NOT NULL,
        status TEXT NOT NULL,
        step_idx BIGINT,
        attempt BIGINT,
        taken_at BIGINT,
        error TEXT
      );
      CREATE UNIQUE INDEX inbox_by_id ON inbox(run_id, id);
      CREATE INDEX inbox_pending ON inbox(run_id, name, seq) WHERE status = 'pending';
      ALTER TABLE runs ADD COLUMN waiting_for TEXT;
      CREATE INDEX runs_waiting ON runs(wake_at) WHERE status = 'waiting';
    `,
  },
  {
    version: 8,
    name: "child runs: the run and step that started a run with run.child, and an index of a run's children",
    sql: `
      ALTER TABLE runs ADD COLUMN parent_id TEXT;
      ALTER TABLE runs ADD COLUMN parent_step BIGINT;
      CREATE INDEX runs_by_parent ON runs(parent_id, parent_step) WHERE parent_id IS NOT NULL;
    `,
  },
  {
    version: 9,
    name: 'the lease fence as a function, planned once per session (SQLite 9 gave actions_by_step the seq it has here)',
    // Every journal transaction of a lease holder starts with this renewal (PgDb.fence). As a DO block it was parsed
    // and compiled on every transaction; a function's plan is cached by the session. It raises when the lease is not
    // held, which aborts the rest of the one-query batch the same way on both of the PG thread's paths.
    sql: `
      CREATE FUNCTION logbook_fence(p_updated BIGINT, p_ttl BIGINT, p_id TEXT, p_token TEXT, p_epoch BIGINT) RETURNS void
      LANGUAGE plpgsql AS $fn$
      BEGIN
        UPDATE runs SET updated_at = p_updated, lease_expires = ${PG_NOW} + p_ttl
          WHERE id = p_id AND lease_token = p_token AND lease_epoch = p_epoch;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'the fencing statement changed no row' USING ERRCODE = '${FENCE_SQLSTATE}';
        END IF;
      END $fn$;
    `,
  },
  {
    version: 10,
    name: "SQLite 10 made steps, actions and the LangGraph tables rowid tables; PostgreSQL's heap tables already keep values out of their keys",
    // The versions are shared (a journal's schema version means the same on both), so this one is recorded here too.
    sql: 'SELECT 1;',
  },
  {
    version: 11,
    name: "SQLite 11 took AUTOINCREMENT off events; PostgreSQL's identity column keeps its sequence apart from the table's pages",
    sql: 'SELECT 1;',
  },
  {
    version: 12,
    name: "SQLite 12 folds steps and actions from the events; PostgreSQL writes them in the transition's one round trip, as before",
    sql: 'SELECT 1;',
  },
];
