// The journal reader process: serves the extension's tree over JSON lines on stdio, and reports journal changes.
// It runs on the Node the user configured, so the extension host never loads better-sqlite3.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as z from 'zod/mini';
// zod/mini throws core's error class; importing it by name keeps the rest of core (`z.core.*`) out of the bundle.
import { $ZodError } from 'zod/v4/core';
import { openStore, type Store } from '../runtime/store';
import { LogbookError, describe } from '../runtime/errors';
import { ENGLISH } from '../shared/zodEnglish';
import { METHODS, Request, type ChangedNotice, type Method } from './protocol';
import { JournalQueries } from './queries';
import { ChangeTracker, watchFolder } from './watch';

const POLL_MS = 250;
const LEASE_CHECK_MS = 1000;
const NUDGE_DELAY_MS = 30;

interface Open {
  store: Store;
  queries: JournalQueries;
  tracker: ChangeTracker;
  ino: number;
}

let file: string | undefined;
let current: Open | undefined;
let stopWatch: () => void = () => undefined;
let nudgeTimer: NodeJS.Timeout | undefined;

function send(msg: unknown): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

function notify(n: ChangedNotice | undefined): void {
  if (n) send(n);
}

function close(): void {
  current?.store.close();
  current = undefined;
}

/** Opens the journal when it exists and holds a schema; a journal not created yet reads as empty. */
function ensureOpen(): Open | undefined {
  if (!file) return undefined;
  if (current) return current;
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  if (st.size === 0) return undefined;
  const store = openStore(file, { readonly: true });
  try {
    const version = store.db.schemaVersion();
    if (version === 0) {
      store.close();
      return undefined;
    }
    current = { store, queries: new JournalQueries(store), tracker: new ChangeTracker(store), ino: st.ino };
    return current;
  } catch (err) {
    store.close();
    throw err;
  }
}

function tick(withLeases: boolean): void {
  try {
    if (!file) return;
    if (!current) {
      if (ensureOpen()) notify({ event: 'changed', runs: [], structure: true, seq: 0 });
      return;
    }
    let ino = -1;
    try {
      ino = fs.statSync(file).ino;
    } catch {
      // Deleted: shown as empty until it comes back.
    }
    if (ino !== current.ino) {
      close();
      ensureOpen();
      notify({ event: 'changed', runs: [], structure: true, seq: 0 });
      return;
    }
    notify(current.tracker.poll());
    if (withLeases) notify(current.tracker.checkLeases());
  } catch (err) {
    process.stderr.write(`reader: ${describe(err)}\n`);
    close();
  }
}

function nudge(): void {
  if (nudgeTimer) return;
  nudgeTimer = setTimeout(() => {
    nudgeTimer = undefined;
    tick(false);
  }, NUDGE_DELAY_MS);
}

const EMPTY: { [M in Method]?: unknown } = {
  runs: { total: 0, runs: [] },
  run: null,
  steps: { total: 0, steps: [] },
  actions: { total: 0, actions: [] },
  action: null,
  checkpoint: null,
  timeline: null,
  scriptStatus: { run: null, steps: {}, actions: {} },
};

function handle(method: Method, raw: unknown): unknown {
  const params = METHODS[method].params.parse(raw, ENGLISH);
  if (method === 'open') {
    const p = params as { db: string };
    const abs = path.resolve(p.db);
    if (abs !== file) {
      close();
      stopWatch();
      file = abs;
      stopWatch = watchFolder(abs, nudge);
    }
    return { exists: ensureOpen() !== undefined, file: abs };
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
  close();
  process.exit(0);
});
let ticks = 0;
setInterval(() => tick(++ticks % Math.round(LEASE_CHECK_MS / POLL_MS) === 0), POLL_MS);
