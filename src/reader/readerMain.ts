// The journal reader process: serves the extension's tree over JSON lines on stdio, and reports journal changes.
// It runs on the Node the user configured, so the extension host never loads better-sqlite3 or pg.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as z from 'zod/mini';
// zod/mini throws core's error class; importing it by name keeps the rest of core (`z.core.*`) out of the bundle.
import { $ZodError } from 'zod/v4/core';
import { NOTIFY_CHANNEL, isPostgresUrl, openStore, redactUrl, type Store } from '../runtime/store';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';
import { ENGLISH } from '../shared/zodEnglish';
import { SecretMask } from '../shared/secrets';
import { PgListener } from '../runtime/store';
import { METHODS, Request, type ChangedNotice, type Method } from './readerProtocol';
import { JournalQueries } from './queries';
import { ChangeTracker, watchFolder } from './watch';

const POLL_MS = 250;
const LEASE_CHECK_MS = 1000;
const NUDGE_DELAY_MS = 30;

/**
 * PostgreSQL: LISTEN tells of every commit, so the data version is read on each notification; while LISTEN is down
 * (or $LOGBOOK_READER_LISTEN=0) it is polled every PG_POLL_MS, and while it is up every PG_SAFETY_MS as a safety net
 * (0: never). A journal that cannot be opened (server down) is retried every PG_REOPEN_MS.
 */
const envMs = (name: string, fallback: number): number => {
  const n = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(n) && n >= 0 ? n : fallback;
};
const PG_POLL_MS = envMs('LOGBOOK_READER_POLL_MS', 500);
const PG_SAFETY_MS = envMs('LOGBOOK_READER_SAFETY_POLL_MS', 10_000);
const PG_REOPEN_MS = 1000;
const LISTEN = process.env.LOGBOOK_READER_LISTEN !== '0';

interface Open {
  store: Store;
  queries: JournalQueries;
  tracker: ChangeTracker;
  /** The SQLite file's inode: a file replaced under the same name is reopened. */
  ino: number;
}

/** The journal: an absolute SQLite path, or a postgres:// URL (its password, if any, is in PGPASSWORD). */
let target: string | undefined;
let shared = false;
let current: Open | undefined;
let stopWatch: () => void = () => undefined;
let nudgeTimer: NodeJS.Timeout | undefined;
let listener: PgListener | undefined;
let lastPoll = 0;
let lastOpenAttempt = 0;
/** The last open of a PostgreSQL journal: it had no schema yet, or failed (the error answers requests for a while). */
let lastOpen: { readonly empty: true } | { readonly empty: false; readonly error: unknown } | undefined;
let lastProblem = '';

/** The secrets of this process's environment (the extension's, with a journal password in PGPASSWORD): never shown. */
const mask = SecretMask.ofEnv(process.env);

function send(msg: unknown): void {
  process.stdout.write(`${JSON.stringify(mask.deep(msg))}\n`);
}

function notify(n: ChangedNotice | undefined): void {
  if (n) send(n);
}

function warn(message: string): void {
  // One line per distinct problem: a server that stays down must not flood the extension's log.
  if (message === lastProblem) return;
  lastProblem = message;
  process.stderr.write(`reader: ${mask.text(message)}\n`);
}

function close(): void {
  current?.store.close();
  current = undefined;
}

/** Opens the journal when it exists and holds a schema; a journal not created yet reads as empty. */
function ensureOpen(): Open | undefined {
  if (!target) return undefined;
  if (current) return current;
  let ino = -1;
  if (!shared) {
    let st: fs.Stats;
    try {
      st = fs.statSync(target);
    } catch {
      return undefined;
    }
    if (st.size === 0) return undefined;
    ino = st.ino;
  }
  // A server that is down (or drops packets) is asked again only every PG_REOPEN_MS, not on every request of the tree.
  if (shared && lastOpen && !lastOpen.empty && Date.now() - lastOpenAttempt < PG_REOPEN_MS) throw lastOpen.error;
  lastOpenAttempt = Date.now();
  let store: Store;
  try {
    store = openStore(target, { readonly: true });
  } catch (err) {
    // A database no run has migrated yet reads as empty, like a journal file not created yet.
    const empty = shared && err instanceof LogbookError && err.code === ErrorCodes.DB_OPEN_FAILED;
    if (shared) lastOpen = empty ? { empty: true } : { empty: false, error: err };
    if (empty) return undefined;
    throw err;
  }
  lastOpen = undefined;
  try {
    if (store.schemaVersion() === 0) {
      store.close();
      return undefined;
    }
    current = { store, queries: new JournalQueries(store), tracker: new ChangeTracker(store), ino };
    lastProblem = '';
    return current;
  } catch (err) {
    store.close();
    throw err;
  }
}

/**
 * Whether to try opening a PostgreSQL journal again now: a database without a schema yet is opened when LISTEN tells
 * that a writer committed (its first run migrates it), else on the safety schedule; a failed open every PG_REOPEN_MS.
 */
function reopenDue(): boolean {
  const every = lastOpen?.empty && listener?.isListening ? PG_SAFETY_MS : PG_REOPEN_MS;
  return every > 0 && Date.now() - lastOpenAttempt >= every;
}

/** Whether to read the data version now: SQLite always (it is a local read); PostgreSQL when told, or on schedule. */
function pollDue(nudged: boolean): boolean {
  if (!shared || nudged) return true;
  const every = listener?.isListening ? PG_SAFETY_MS : PG_POLL_MS;
  return every > 0 && Date.now() - lastPoll >= every;
}

function tick(withLeases: boolean, nudged = false): void {
  try {
    if (!target) return;
    if (!current) {
      if (shared && !nudged && !reopenDue()) return;
      if (ensureOpen()) notify({ event: 'changed', runs: [], structure: true, seq: 0 });
      return;
    }
    if (!shared) {
      let ino = -1;
      try {
        ino = fs.statSync(target).ino;
      } catch {
        // Deleted: shown as empty until it comes back.
      }
      if (ino !== current.ino) {
        close();
        ensureOpen();
        notify({ event: 'changed', runs: [], structure: true, seq: 0 });
        return;
      }
    }
    if (pollDue(nudged)) {
      lastPoll = Date.now();
      notify(current.tracker.poll());
    }
    if (withLeases) notify(current.tracker.checkLeases());
  } catch (err) {
    warn(describe(err));
    close();
  }
}

function nudge(): void {
  if (nudgeTimer) return;
  nudgeTimer = setTimeout(() => {
    nudgeTimer = undefined;
    tick(false, true);
  }, NUDGE_DELAY_MS);
}

/** LISTEN on the writers' channel; every notification (and every reconnect, which may have missed some) nudges. */
function listen(url: string): () => void {
  if (!LISTEN) return () => undefined;
  const l = new PgListener(url, NOTIFY_CHANNEL, {
    notified: () => nudge(),
    listening: (on) => {
      if (on) nudge();
    },
    problem: (message) => warn(message),
  });
  listener = l;
  l.start();
  return () => {
    l.stop();
    if (listener === l) listener = undefined;
  };
}

const EMPTY: { [M in Method]?: unknown } = {
  runs: { total: 0, runs: [] },
  children: [],
  run: null,
  steps: { total: 0, steps: [] },
  actions: { total: 0, actions: [] },
  action: null,
  checkpoint: null,
  callRecord: null,
  timeline: null,
  scriptStatus: { run: null, steps: {}, actions: {} },
};

function handle(method: Method, raw: unknown): unknown {
  const params = METHODS[method].params.parse(raw, ENGLISH);
  if (method === 'open') {
    const p = params as { db: string };
    const pg = isPostgresUrl(p.db);
    const next = pg ? p.db : path.resolve(p.db);
    if (next !== target) {
      close();
      stopWatch();
      target = next;
      shared = pg;
      lastOpenAttempt = 0;
      lastOpen = undefined;
      stopWatch = pg ? listen(next) : watchFolder(next, nudge);
    }
    return { exists: ensureOpen() !== undefined, file: pg ? redactUrl(next) : next };
  }
  const o = ensureOpen();
  if (!o) return EMPTY[method];
  const q = o.queries as unknown as Record<Method, (p: unknown) => unknown>;
  return q[method].call(o.queries, params);
}

function onLine(line: string): void {
  if (!line.trim()) return;
  let id = -1;
  try {
    const msg = JSON.parse(line) as { id?: unknown };
    if (typeof msg.id === 'number') id = msg.id;
    const req = Request.parse(msg, ENGLISH);
    send({ id, ok: true, result: handle(req.method, req.params) });
  } catch (err) {
    const code = err instanceof LogbookError ? err.code : 'LB_READER';
    const message = err instanceof $ZodError ? `invalid request: ${z.prettifyError(err)}` : describe(err);
    send({ id, ok: false, error: { code, message } });
  }
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', onLine);
rl.on('close', () => {
  stopWatch();
  close();
  process.exit(0);
});
let ticks = 0;
setInterval(() => tick(++ticks % Math.round(LEASE_CHECK_MS / POLL_MS) === 0), POLL_MS);
