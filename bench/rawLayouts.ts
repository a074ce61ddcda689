// Format v2's entries table with the values agents write (1 KB to 1 MB): which layout keeps an append one leaf page.
//
// `tsx bench/rawLayouts.ts [--rounds N]` appends 1 KB entries durably (one row per transaction, as a checkpoint) to
// a journal that already holds the entries of runs with 1 MB and 100 KB values, in three layouts, and prints each
// median as F (a 4 KiB overwrite + fsync in the same directory) with the WAL frames per append:
// - clustered: WITHOUT ROWID, PRIMARY KEY (run_id, seq), the value inline (the layout docs/journal-format.md drew);
// - rowid: seq the INTEGER PRIMARY KEY, an index on (run_id, seq);
// - clustered + values: the clustered table with values over 900 bytes in a rowid table of their own.
// SQLite compares a key against a spilling WITHOUT ROWID row by reading the row whole, which is why schema 10 made
// steps and actions rowid tables; this measures what that costs format v2's entries, and what each way out costs.

import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { FsyncFloor } from './floor';
import { median, nowUs } from './measure';

/** Above this many bytes a value leaves the clustered row (a 4 KiB page's index cell spills at about 1,000). */
const INLINE_MAX = 900;

interface Layout {
  readonly name: string;
  readonly schema: string;
  /** Appends one entry; `seq` is the run's next, counted in memory by the lease holder. */
  append(db: Database.Database): (runId: string, seq: number, data: string) => void;
}

const COLUMNS = 'run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL';

const LAYOUTS: readonly Layout[] = [
  {
    name: 'clustered (WITHOUT ROWID, value inline)',
    schema: `CREATE TABLE entries (${COLUMNS}, data TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;`,
    append: (db) => {
      const s = db.prepare("INSERT INTO entries VALUES (?, ?, 'step.completed', 0, ?)");
      return (runId, seq, data) => void s.run(runId, seq, data);
    },
  },
  {
    name: 'rowid (seq INTEGER PRIMARY KEY, index on run_id, seq)',
    schema: `CREATE TABLE entries (id INTEGER PRIMARY KEY, ${COLUMNS}, data TEXT); CREATE UNIQUE INDEX entries_by_run ON entries(run_id, seq);`,
    append: (db) => {
      const s = db.prepare("INSERT INTO entries (run_id, seq, kind, at, data) VALUES (?, ?, 'step.completed', 0, ?)");
      return (runId, seq, data) => void s.run(runId, seq, data);
    },
  },
  {
    name: `clustered + values over ${INLINE_MAX} B in a rowid table`,
    schema: `CREATE TABLE entries (${COLUMNS}, data TEXT, value_id INTEGER, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
             CREATE TABLE entry_values (id INTEGER PRIMARY KEY, data TEXT NOT NULL);`,
    append: (db) => {
      const inline = db.prepare("INSERT INTO entries VALUES (?, ?, 'step.completed', 0, ?, NULL)");
      const value = db.prepare('INSERT INTO entry_values (data) VALUES (?)');
      const ref = db.prepare("INSERT INTO entries VALUES (?, ?, 'step.completed', 0, NULL, ?)");
      return (runId, seq, data) => {
        if (data.length <= INLINE_MAX) inline.run(runId, seq, data);
        else ref.run(runId, seq, value.run(data).lastInsertRowid);
      };
    },
  },
];

/** WAL frames written since the WAL last started over (the RESTART before the timed appends): the log's own count. */
function framesWritten(db: Database.Database): number {
  const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
  return row?.log ?? 0;
}

/** The same sequence the bench's checkpoint rows leave behind: runs of 1 MB, then 100 KB values, then the 1 KB run timed. */
function measure(dir: string, layout: Layout, appends: number): { us: number[]; frames: number } {
  const file = path.join(dir, `${layout.name.split(' ')[0]}-${Date.now()}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('mmap_size = 0');
  db.exec(layout.schema);
  const append = layout.append(db);
  const tx = db.transaction((fn: () => void) => fn());
  const write = (runId: string, seq: number, data: string): void => tx.immediate(() => append(runId, seq, data));
  const value = (bytes: number, i: number): string => JSON.stringify({ i, text: 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes) });
  for (let i = 0; i < 5; i++) write('run-1mb', i + 1, value(1 << 20, i));
  for (let i = 0; i < 15; i++) write('run-100kb', i + 1, value(100 * 1024, i));
  const us: number[] = [];
  // The next append starts the WAL over, overwriting its frames as a journal in use does (a file that grows costs each fsync more).
  db.pragma('wal_checkpoint(RESTART)');
  for (let i = 0; i < appends; i++) {
    const data = value(1024, i);
    const t0 = nowUs();
    write('run-1kb', i + 1, data);
    us.push(nowUs() - t0);
  }
  const frames = framesWritten(db) / appends;
  db.close();
  fs.rmSync(file, { force: true });
  return { us, frames };
}

function main(): void {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, n: { type: 'string', default: '200' } } });
  const rounds = Number(values.rounds);
  const n = Number(values.n);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-layouts-'));
  const floor = new FsyncFloor(dir);
  try {
    const results = new Map<string, { f: number[]; frames: number[] }>();
    for (let r = 0; r < rounds; r++) {
      // Rotated each round, with F sampled beside each layout, so no layout always follows the same neighbour.
      const order = LAYOUTS.map((_, i) => LAYOUTS[(i + r) % LAYOUTS.length] as Layout);
      for (const layout of order) {
        const f = median(floor.samples(40));
        const { us, frames } = measure(dir, layout, n);
        const entry = results.get(layout.name) ?? { f: [], frames: [] };
        entry.f.push(median(us) / f);
        entry.frames.push(frames);
        results.set(layout.name, entry);
      }
    }
    console.log(`1 KB durable appends after 5 x 1 MB and 15 x 100 KB entries, ${rounds} rounds of ${n}: median as F (per round), WAL frames per append`);
    for (const [name, { f, frames }] of results) {
      console.log(`  ${name.padEnd(58)} ${f.map((x) => x.toFixed(2)).join(' / ')} F   ${median(frames).toFixed(1)} frames`);
    }
  } finally {
    floor.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
