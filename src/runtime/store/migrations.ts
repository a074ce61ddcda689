// Schema migrations as data: each bumps user_version inside its own immediate transaction.

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'journal: runs, steps, actions, append-only events',
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        script TEXT NOT NULL,
        input TEXT,
        status TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        output TEXT,
        error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        lease_token TEXT,
        lease_owner TEXT,
        lease_pid INTEGER,
        lease_pid_start TEXT,
        lease_host TEXT,
        lease_epoch INTEGER NOT NULL DEFAULT 0,
        lease_expires INTEGER,
        forked_from TEXT,
        forked_at_step INTEGER
      );
      CREATE INDEX runs_by_created ON runs(created_at);
      CREATE TABLE steps (
        run_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        PRIMARY KEY (run_id, idx)
      ) WITHOUT ROWID;
      CREATE TABLE actions (
        run_id TEXT NOT NULL,
        id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        step_idx INTEGER NOT NULL,
        type TEXT NOT NULL,
        version INTEGER NOT NULL,
        effect TEXT NOT NULL,
        args TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        executions INTEGER NOT NULL DEFAULT 0,
        reconciliation TEXT,
        decision TEXT,
        approval TEXT,
        approval_note TEXT,
        compensation TEXT,
        compensation_result TEXT,
        compensation_executions INTEGER NOT NULL DEFAULT 0,
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        commit_seq INTEGER,
        PRIMARY KEY (run_id, id)
      ) WITHOUT ROWID;
      CREATE INDEX actions_by_step ON actions(run_id, step_idx);
      CREATE INDEX actions_by_seq ON actions(run_id, seq);
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        step_idx INTEGER,
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
        started_at INTEGER NOT NULL,
        seen_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'LangGraph checkpoints: checkpoints, channel values by version, pending writes',
    // A checkpoint row holds no channel values: each (channel, version) is stored once in graph_blobs, so a superstep
    // writes only the channels it changed (LangGraph's own SQLite saver writes a full snapshot at every step).
    sql: `
      CREATE TABLE graph_checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        type TEXT NOT NULL,
        checkpoint BLOB NOT NULL,
        metadata_type TEXT NOT NULL,
        metadata BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
      ) WITHOUT ROWID;
      CREATE TABLE graph_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
      ) WITHOUT ROWID;
      CREATE TABLE graph_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        task_path TEXT NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 5,
    name: 'cancel, sleep: a cancel request a live holder reads with its fence, and the wake time of a sleeping run',
    sql: `
      ALTER TABLE runs ADD COLUMN cancel_requested TEXT;
      ALTER TABLE runs ADD COLUMN wake_at INTEGER;
      CREATE INDEX runs_waking ON runs(wake_at) WHERE status = 'sleeping';
    `,
  },
  // 6 is format v2's (another branch): versions are increasing and unique, not contiguous.
  {
    version: 7,
    name: 'events sent to runs (run.waitFor, approvals): the inbox, and the event a waiting run waits for',
    // One row per event sent; `status` moves from pending to delivered (or refused) in the transaction that journals
    // the step (or the approval) that takes it, which is what makes delivery exactly once across a kill.
    sql: `
      CREATE TABLE inbox (
        seq INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        name TEXT NOT NULL,
        id TEXT NOT NULL,
        data TEXT,
        sent_at INTEGER NOT NULL,
        sent_by TEXT NOT NULL,
        status TEXT NOT NULL,
        step_idx INTEGER,
        attempt INTEGER,
        taken_at INTEGER,
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
      ALTER TABLE runs ADD COLUMN parent_step INTEGER;
      CREATE INDEX runs_by_parent ON runs(parent_id, parent_step) WHERE parent_id IS NOT NULL;
    `,
  },
  {
    version: 9,
    name: "a step's actions in start order: actions_by_step carries seq, as PostgreSQL's always did",
    // Replay of a redone step reads its actions a page at a time in seq order: with seq in the index, each page is one
    // range of it, where before the first page needed a MIN(seq) over every row of the step and each page a sort.
    sql: `
      DROP INDEX actions_by_step;
      CREATE INDEX actions_by_step ON actions(run_id, step_idx, seq);
    `,
  },
  {
    version: 10,
    name: 'steps, actions and the LangGraph tables become rowid tables: a large value no longer sits in a key the B-tree compares',
    // A WITHOUT ROWID table is a B-tree of whole rows, and SQLite compares a key against a row that spills onto
    // overflow pages by reading the whole row: a seek past a 1 MB checkpoint read its 256 pages, so every step after
    // large ones got slower (a 1 KB checkpoint 2.3x, measured). As rowid tables, the primary key is an index of the
    // key columns alone and a row's values are reached by rowid. Rows are copied as they are, in key order.
    sql: `
      ALTER TABLE steps RENAME TO steps_v9;
      CREATE TABLE steps (
        run_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        PRIMARY KEY (run_id, idx)
      );
      INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at, ended_at)
        SELECT run_id, idx, name, status, result, error, attempt, started_at, ended_at FROM steps_v9 ORDER BY run_id, idx;
      DROP TABLE steps_v9;

      ALTER TABLE actions RENAME TO actions_v9;
      CREATE TABLE actions (
        run_id TEXT NOT NULL,
        id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        step_idx INTEGER NOT NULL,
        type TEXT NOT NULL,
        version INTEGER NOT NULL,
        effect TEXT NOT NULL,
        args TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        executions INTEGER NOT NULL DEFAULT 0,
        reconciliation TEXT,
        decision TEXT,
        approval TEXT,
        approval_note TEXT,
        compensation TEXT,
        compensation_result TEXT,
        compensation_executions INTEGER NOT NULL DEFAULT 0,
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        commit_seq INTEGER,
        PRIMARY KEY (run_id, id)
      );
      INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, error, executions,
          reconciliation, decision, approval, approval_note, compensation, compensation_result, compensation_executions,
          attempt, started_at, ended_at, commit_seq)
        SELECT run_id, id, seq, step_idx, type, version, effect, args, status, result, error, executions,
          reconciliation, decision, approval, approval_note, compensation, compensation_result, compensation_executions,
          attempt, started_at, ended_at, commit_seq
        FROM actions_v9 ORDER BY run_id, seq;
      DROP TABLE actions_v9;
      CREATE INDEX actions_by_step ON actions(run_id, step_idx, seq);
      CREATE INDEX actions_by_seq ON actions(run_id, seq);
      CREATE INDEX actions_in_doubt_after_error ON actions(run_id, seq) WHERE status = 'started' AND error IS NOT NULL;

      ALTER TABLE graph_checkpoints RENAME TO graph_checkpoints_v9;
      CREATE TABLE graph_checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        type TEXT NOT NULL,
        checkpoint BLOB NOT NULL,
        metadata_type TEXT NOT NULL,
        metadata BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
      );
      INSERT INTO graph_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_id, type, checkpoint, metadata_type, metadata, created_at)
        SELECT thread_id, checkpoint_ns, checkpoint_id, parent_id, type, checkpoint, metadata_type, metadata, created_at
        FROM graph_checkpoints_v9 ORDER BY thread_id, checkpoint_ns, checkpoint_id;
      DROP TABLE graph_checkpoints_v9;

      ALTER TABLE graph_blobs RENAME TO graph_blobs_v9;
      CREATE TABLE graph_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
      );
      INSERT INTO graph_blobs (thread_id, checkpoint_ns, channel, version, type, value)
        SELECT thread_id, checkpoint_ns, channel, version, type, value FROM graph_blobs_v9 ORDER BY thread_id, checkpoint_ns, channel, version;
      DROP TABLE graph_blobs_v9;

      ALTER TABLE graph_writes RENAME TO graph_writes_v9;
      CREATE TABLE graph_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        task_path TEXT NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
      );
      INSERT INTO graph_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value)
        SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value
        FROM graph_writes_v9 ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx;
      DROP TABLE graph_writes_v9;
    `,
  },
  {
    version: 11,
    name: "events lose AUTOINCREMENT: a transition no longer writes the counter's page (format 2's first change); seq is the rowid",
    // AUTOINCREMENT kept the largest seq ever handed out in sqlite_sequence, a page every journal transaction rewrote.
    // A plain INTEGER PRIMARY KEY hands out the largest seq in the table plus one, which goes back only when the newest
    // rows are deleted: deleteRun then leaves a marker row (run_id '') at the old largest seq, and so does this
    // migration when sqlite_sequence is ahead of the table, so a change feed's position never names a seq given twice.
    // A counter that is not an integer a JS number holds exactly (a hand-edited sqlite_sequence) is not carried over.
    // The rename carries the table's sqlite_sequence row to events_v10; the new table has none.
    sql: `
      ALTER TABLE events RENAME TO events_v10;
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        step_idx INTEGER,
        action_id TEXT,
        data TEXT
      );
      INSERT INTO events (seq, run_id, attempt, at, kind, step_idx, action_id, data)
        SELECT seq, run_id, attempt, at, kind, step_idx, action_id, data FROM events_v10 ORDER BY seq;
      INSERT INTO events (seq, run_id, attempt, at, kind)
        SELECT s.seq, '', 0, 0, 'journal.deleted' FROM sqlite_sequence s
        WHERE s.name = 'events_v10' AND typeof(s.seq) = 'integer' AND s.seq < 9007199254740991
          AND s.seq > (SELECT COALESCE(MAX(seq), 0) FROM events_v10);
      DROP TABLE events_v10;
      CREATE INDEX events_by_run ON events(run_id, seq);
    `,
  },
  {
    version: 12,
    name: 'journal format 2: a transition writes only its event, which carries its state writes; steps and actions are folded from it',
    // The rows written by format 1 are complete up to each run's last event: that is where each watermark starts, and
    // nothing is copied. Events from now on carry their writes (`fold`), applied past the watermark (store/fold.ts).
    sql: `
      ALTER TABLE events ADD COLUMN fold TEXT;
      ALTER TABLE runs ADD COLUMN folded_seq INTEGER NOT NULL DEFAULT 0;
      UPDATE runs SET folded_seq = COALESCE((SELECT MAX(seq) FROM events WHERE events.run_id = runs.id), 0);
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((m, x) => Math.max(m, x.version), 0);
