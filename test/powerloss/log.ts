// Reads the recording VFS's binary log: one record per open, write, truncate, sync, delete, directory sync or marker.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** What vfs/recordvfs.c writes: type u8, file id u32, a i64, length u32 (little-endian), then `length` bytes. */
export type Op =
  | { readonly kind: 'open'; readonly file: string; readonly existed: boolean }
  | { readonly kind: 'write'; readonly file: string; readonly offset: number; readonly data: Buffer }
  | { readonly kind: 'truncate'; readonly file: string; readonly size: number }
  | { readonly kind: 'sync'; readonly file: string }
  | { readonly kind: 'delete'; readonly file: string }
  | { readonly kind: 'dirsync' }
  | { readonly kind: 'mark'; readonly text: string };

const HEAD = 17;

/** The log's records in call order; files are named by their base name (journal.db, journal.db-wal). */
export function readLog(file: string): Op[] {
  const buf = fs.readFileSync(file);
  const names = new Map<number, string>();
  const ops: Op[] = [];
  for (let at = 0; at + HEAD <= buf.length;) {
    const type = buf.readUInt8(at);
    const id = buf.readUInt32LE(at + 1);
    const a = Number(buf.readBigInt64LE(at + 5));
    const len = buf.readUInt32LE(at + 13);
    const body = buf.subarray(at + HEAD, at + HEAD + len);
    at += HEAD + len;
    const name = names.get(id) ?? '';
    switch (type) {
      case 1: {
        const base = path.basename(body.toString('utf8'));
        names.set(id, base);
        ops.push({ kind: 'open', file: base, existed: a >= 2 ** 40 });
        break;
      }
      case 2:
        ops.push({ kind: 'write', file: name, offset: a, data: Buffer.from(body) });
        break;
      case 3:
        ops.push({ kind: 'truncate', file: name, size: a });
        break;
      case 4:
        ops.push({ kind: 'sync', file: name });
        break;
      case 5:
        ops.push({ kind: 'delete', file: path.basename(body.toString('utf8')) });
        break;
      case 6:
        ops.push({ kind: 'mark', text: body.toString('utf8') });
        break;
      case 7:
        ops.push({ kind: 'dirsync' });
        break;
      case 8:
        break;
      default:
        throw new Error(`powerloss log ${file}: unknown record type ${type} at byte ${at}`);
    }
  }
  return ops;
}
