// LangGraph's own checkpointer validation suite against LogbookSaver, on a SQLite journal and on a real PostgreSQL.
//
// The saver is named for itself, so none of the suite's tests is skipped for it (the suite skips "stores only the
// channel values that changed" by name for LangGraph's SQLite saver, which writes a full snapshot per checkpoint).

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { LogbookSaver } from '../../src/langgraph';
import { createScratchSchema } from '../../src/runtime/store';
import { startPgServer, type PgServer } from '../pg/server';

const dirs = new Map<LogbookSaver, string>();
let root = '';

validate<LogbookSaver>({
  checkpointerName: 'agent-logbook/langgraph (SQLite)',
  beforeAll() {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-lg-'));
  },
  afterAll() {
    fs.rmSync(root, { recursive: true, force: true });
  },
  createCheckpointer() {
    const dir = fs.mkdtempSync(path.join(root, 'j-'));
    const saver = new LogbookSaver({ journal: path.join(dir, 'journal.db') });
    dirs.set(saver, dir);
    return saver;
  },
  destroyCheckpointer(saver) {
    saver.close();
  },
});

let server: PgServer | undefined;
let db = '';
let n = 0;
validate<LogbookSaver>({
  checkpointerName: 'agent-logbook/langgraph (PostgreSQL)',
  beforeAllTimeout: 180_000,
  async beforeAll() {
    server = await startPgServer();
    db = server.createDatabase();
  },
  afterAll() {
    server?.destroy();
  },
  createCheckpointer() {
    // A schema of its own per checkpointer: the suite reuses thread ids ("thread-1") across its parts.
    const schema = `lg_${process.pid}_${++n}`;
    createScratchSchema(db, schema);
    return new LogbookSaver({ journal: `${db}?options=${encodeURIComponent(`-c search_path=${schema}`)}` });
  },
  destroyCheckpointer(saver) {
    saver.close();
  },
});
