// F, the disk's fsync floor: overwrite 4 KiB in place and fsync, in the journal's own directory.

import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { median, nowUs } from './measure';

const BLOCK = 4096;

/** A pre-allocated 4 KiB file next to the journal; each sample rewrites it and waits for fsync. */
export class FsyncFloor {
  private readonly fd: number;
  private readonly buf = Buffer.alloc(BLOCK);
  private counter = 0;

  constructor(dir: string) {
    const file = path.join(dir, 'fsync-floor.bin');
    this.fd = fs.openSync(file, 'w+');
    fs.writeSync(this.fd, this.buf, 0, BLOCK, 0);
    fs.fsyncSync(this.fd);
  }

  /** Median of `n` samples, in µs. SQLite in better-sqlite3 is built without HAVE_FDATASYNC, so it uses fsync too. */
  sample(n: number): number {
    return median(this.samples(n));
  }

  samples(n: number): number[] {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      // Change the content each time so no layer can skip the write as a no-op.
      this.buf.writeUInt32LE(++this.counter, 0);
      const t0 = nowUs();
      fs.writeSync(this.fd, this.buf, 0, BLOCK, 0);
      fs.fsyncSync(this.fd);
      times.push(nowUs() - t0);
    }
    return times;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/**
 * SQLite's own floor in the same directory: one immediate transaction in a WAL database, committed at
 * synchronous=FULL (an fsync of the WAL) or at NORMAL (no fsync). The WAL is cycled once first, so commits overwrite
 * its blocks as they do in a long run, instead of growing the file (which doubles the fsync on ext4).
 */
export class SqliteFloor {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly tx: (v: string | Buffer) => void;
  private n = 0;

  constructor(dir: string) {
    this.db = new Database(path.join(dir, 'sqlite-floor.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)');
    this.insert = this.db.prepare('INSERT INTO t (v) VALUES (?)');
    const t = this.db.transaction((v: string | Buffer) => void this.insert.run(v));
    this.tx = (v) => t.immediate(v);
    // Past the auto-checkpoint at 1000 frames, the next commit restarts the WAL from its start.
    this.db.pragma('synchronous = NORMAL');
    const page = Buffer.alloc(3000);
    for (let i = 0; i < 1100; i++) this.tx(page);
  }

  /** Commits of one small row (one page), µs. */
  samples(n: number, durable: boolean): number[] {
    return this.run(n, durable, () => `row ${++this.n} ${'x'.repeat(64)}`);
  }

  private run(n: number, durable: boolean, value: () => string | Buffer): number[] {
    this.db.pragma(`synchronous = ${durable ? 'FULL' : 'NORMAL'}`);
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = value();
      const t0 = nowUs();
      this.tx(v);
      times.push(nowUs() - t0);
    }
    return times;
  }

  close(): void {
    this.db.close();
  }
}
