// Records one scenario through the shim: a fresh journal, one run, and the log of what reached the journal's files.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/runtime/store';
import { startRun, driveClaimed } from '../../src/runtime/engine';
import { withNewSession } from '../../src/runtime/store/owner';
import { claimRun } from '../../src/runtime/store/queue';
import { dbOf } from '../../src/runtime/store/db';
import type { Shim } from './shim';
import { journalFile, journalOf, provider, type Scenario } from './scenarios';

export const RUN_ID = 'r';
export const SCRIPT_VERSION = 'powerloss-1';

export interface Recording {
  readonly scenario: Scenario;
  readonly log: string;
  /** How the run ended (its status), or the error code that stopped it. */
  readonly ended: string;
}

export interface RecordOptions {
  readonly dropSyncs?: boolean;
  /** Fail the n-th recorded sync (SQLITE_IOERR_FSYNC). */
  readonly failSync?: number;
  /** Fail every recorded write from the n-th on (SQLITE_FULL: the disk is full). */
  readonly failWrites?: number;
}

export async function record(shim: Shim, scenario: Scenario, work: string, opts: RecordOptions = {}): Promise<Recording> {
  const dir = path.join(
    work,
    scenario.name + (opts.dropSyncs ? '-nosync' : '') + (opts.failSync ? `-failsync${opts.failSync}` : '') + (opts.failWrites ? `-full${opts.failWrites}` : ''),
  );
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const log = `${dir}.log`;
  const file = journalOf(dir);
  journalFile.current = file;
  provider.reset([]);
  provider.mark = (text) => shim.mark(text);
  shim.record(log, dir);
  if (opts.dropSyncs) shim.dropSyncs(true);
  if (opts.failSync) shim.failSync(opts.failSync);
  if (opts.failWrites) shim.failWrites(opts.failWrites);
  let ended: string;
  try {
    const store = openStore(file);
    try {
      const out = await drive(store, scenario);
      ended = out.error?.code ? `${out.status} ${out.error.code}` : out.status;
    } finally {
      store.close();
    }
  } catch (err) {
    ended = (err as { code?: string }).code ?? String(err);
  } finally {
    shim.failWrites(0);
    shim.stop();
    provider.mark = () => undefined;
  }
  return { scenario, log, ended };
}

async function drive(store: ReturnType<typeof openStore>, s: Scenario): Promise<{ status: string; error?: { code?: string } | undefined }> {
  const opts = {
    script: `powerloss/${s.name}`,
    scriptVersion: SCRIPT_VERSION,
    runId: RUN_ID,
    role: 'powerloss',
    durability: s.durability,
    log: () => undefined,
  };
  if (!s.claimed) return startRun(store, s.agent, { ...opts, input: {} });
  store.enqueueRun({ id: RUN_ID, agent: s.agent.name, script: opts.script, scriptVersion: SCRIPT_VERSION, input: '{}' });
  const claimed = withNewSession('powerloss worker', (owner) =>
    claimRun(dbOf(store.db), store.reader, owner, [{ agent: s.agent.name, version: SCRIPT_VERSION }]),
  );
  if (!claimed) throw new Error('powerloss: the worker claimed nothing');
  const out = await driveClaimed(store, s.agent, claimed, { role: 'powerloss worker', durability: s.durability, log: () => undefined });
  return 'status' in out ? out : { status: 'compensated' };
}
