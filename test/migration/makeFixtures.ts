// Writes the v1 journal fixtures (schema version 3) with the real CLI, real child processes and real SIGKILLs, and their goldens: `npx tsx test/migration/makeFixtures.ts [--pg]`.
//
// Run it only to (re)create test/fixtures/journals/v1/ from the code of the format it names; the migration test
// (test/store/migration-fixtures.test.ts) opens the committed files with the current code and compares the reader's view.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { CLI, ROOT, tmpDir } from '../helpers';
import { openStore } from '../../src/runtime/store';
import { journalView } from './view';
import { startPgServer, type PgServer } from '../pg/server';
import { FIXTURE_DIR, PG_DUMP, PG_GOLDEN, SQLITE_FIXTURE, SQLITE_GOLDEN, pgTool, restorePgDump } from './fixtures';

const AGENT = path.join(ROOT, 'test', 'migration', 'agent.ts');

interface Cli {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
}

function logbook(dir: string, journal: string, args: string[]): Cli {
  const r = spawnSync(process.execPath, [CLI, ...args, '--journal', journal], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1' },
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, out: `${r.stdout}${r.stderr}` };
}

/** Each run in the state the issue lists, written by today's code; each call is checked so a fixture never holds a surprise. */
function writeRuns(dir: string, journal: string): void {
  const ok = (args: string[], status = 0): Cli => {
    const r = logbook(dir, journal, args);
    assert.equal(r.status, status, `logbook ${args.join(' ')} exited ${r.status} (${r.signal}): ${r.out}`);
    return r;
  };
  const killed = (args: string[]): void => {
    const r = logbook(dir, journal, args);
    assert.equal(r.signal, 'SIGKILL', `logbook ${args.join(' ')} was not killed: ${r.out}`);
  };
  const waitingOn = (r: Cli): string => (JSON.parse(r.out.slice(r.out.indexOf('{'))) as { waitingOn: { actionId: string } }).waitingOn.actionId;

  ok(['run', AGENT, '--run-id', 'completed']);
  ok(['run', AGENT, '--run-id', 'failed', '--input', '{"fail":true}'], 1);
  killed(['run', AGENT, '--run-id', 'crashed', '--crash-at', 'prepare#1@after-checkpoint']);
  // In doubt: killed between `started` and `committed` of a non-idempotent action that has verify.
  killed(['run', AGENT, '--run-id', 'in-doubt', '--crash-at', 'card.charge#1@after-start']);
  // In doubt without verify: the resume stops for a person's decision.
  killed(['run', AGENT, '--run-id', 'needs-decision', '--crash-at', 'sms.notify#1@after-start']);
  ok(['resume', 'needs-decision', '--json'], 3);
  killed(['run', AGENT, '--run-id', 'decided', '--crash-at', 'sms.notify#1@after-start']);
  const d = waitingOn(ok(['resume', 'decided', '--json'], 3));
  ok(['resume', 'decided', '--decide', `${d}=happened`]);
  // A model call killed after its tool started: the label tool is in doubt inside the model step.
  killed(['run', AGENT, '--run-id', 'model-in-doubt', '--crash-at', 'tool.printLabel#1@after-start']);
  ok(['run', AGENT, '--run-id', 'awaiting-approval', '--input', '{"approval":true}'], 3);
  const a = waitingOn(ok(['run', AGENT, '--run-id', 'approved', '--input', '{"approval":true}', '--json'], 3));
  ok(['approve', 'approved', a, '--note', 'looks right', '--no-resume']);
  const rj = waitingOn(ok(['run', AGENT, '--run-id', 'rejected', '--input', '{"approval":true}', '--json'], 3));
  ok(['reject', 'rejected', rj, '--note', 'not this one'], 1);
  ok(['run', AGENT, '--run-id', 'compensated']);
  ok(['compensate', 'compensated']);
  ok(['run', AGENT, '--run-id', 'compensating']);
  killed(['compensate', 'compensating', '--crash-at', 'card.charge#1@compensate:after-start']);
  ok(['fork', 'completed', '--step', 'charge', '--run-id', 'forked']);
}

function writeGolden(file: string, store: ReturnType<typeof openStore>): void {
  fs.writeFileSync(file, `${JSON.stringify(journalView(store), null, 2)}\n`);
}

function makeSqlite(): void {
  const dir = tmpDir('logbook-fixtures-');
  const journal = path.join(dir, 'journal.db');
  writeRuns(dir, journal);
  const raw = new Database(journal);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.exec('VACUUM');
  assert.equal(raw.pragma('user_version', { simple: true }), 3, 'the fixture is a schema-3 (format v1) journal');
  raw.close();
  fs.copyFileSync(journal, SQLITE_FIXTURE);
  const copy = path.join(tmpDir('logbook-fixture-view-'), 'journal.db');
  fs.copyFileSync(SQLITE_FIXTURE, copy);
  const store = openStore(copy, { readonly: true });
  writeGolden(SQLITE_GOLDEN, store);
  store.close();
}

async function makePg(): Promise<void> {
  const server: PgServer = await startPgServer();
  try {
    const url = server.createDatabase('fixture');
    const dir = tmpDir('logbook-fixtures-pg-');
    writeRuns(dir, url);
    const dump = spawnSync(pgTool('pg_dump'), ['--no-owner', '--no-privileges', '-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', 'fixture'], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    assert.equal(dump.status, 0, dump.stderr);
    // psql before 15.14 knows no \restrict: the dump is ours and committed, so the lines go (nothing else changes).
    fs.writeFileSync(PG_DUMP, dump.stdout.replace(/^\\(un)?restrict \S+\n/gm, ''));
    const restored = restorePgDump(server, 'restored');
    const store = openStore(restored, { readonly: true });
    try {
      writeGolden(PG_GOLDEN, store);
    } finally {
      store.close();
    }
  } finally {
    server.destroy();
  }
}

async function main(): Promise<void> {
  fs.mkdirSync(FIXTURE_DIR, { recursive: true });
  if (process.argv.includes('--pg')) await makePg();
  else makeSqlite();
  console.log(`fixtures written under ${path.relative(ROOT, FIXTURE_DIR)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
