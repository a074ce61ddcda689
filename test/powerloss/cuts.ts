// Rebuilds what a power cut at a point of the log could leave on disk, under SQLite's model or ext4 data=ordered's.

import type { Op } from './log';

export type Model = 'sqlite' | 'ext4-ordered';
export const SECTOR = 512;

/** A small seeded generator (mulberry32): the same seed gives the same cuts. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Change = { readonly at: number; readonly op: Extract<Op, { kind: 'write' | 'truncate' }>; readonly sizeBefore: number };

interface FileState {
  durable: Buffer;
  /** Writes and truncates since the file's last sync, in call order. */
  pending: Change[];
  size: number;
  createdAt: number | undefined;
  dirDurable: boolean;
  deletedAt: number | undefined;
}

/** How the unsynced writes of a cut were treated; `all` and `none` are the two ends every cut sampler includes. */
export type Flavour = 'all' | 'none' | 'random';

function put(img: Buffer, len: number, offset: number, data: Buffer): { img: Buffer; len: number } {
  const end = offset + data.length;
  if (end > img.length) {
    const grown = Buffer.alloc(Math.max(end, img.length * 2));
    img.copy(grown, 0, 0, len);
    img = grown;
  }
  if (offset > len) img.fill(0, len, offset);
  data.copy(img, offset);
  return { img, len: Math.max(len, end) };
}

/** The sectors of a write that reached the disk: each 512-byte piece (by file offset) kept or not. */
function tornPieces(offset: number, data: Buffer, keep: () => boolean): Array<{ offset: number; data: Buffer }> {
  const out: Array<{ offset: number; data: Buffer }> = [];
  let at = offset;
  while (at < offset + data.length) {
    const next = Math.min(offset + data.length, (Math.floor(at / SECTOR) + 1) * SECTOR);
    if (keep()) out.push({ offset: at, data: data.subarray(at - offset, next - offset) });
    at = next;
  }
  return out;
}

/**
 * The files (base name → bytes; absent: missing) a power cut just before op `cut` leaves. Everything a sync covered
 * is there; each unsynced write is whole, dropped, or torn at sector boundaries inside it; no byte outside a write
 * changes; the -shm file is never there.
 *
 * - sqlite: SQLite's documented assumptions (atomiccommit.html, psow.html): writes reach the disk in any order; a
 *   file that grew may show garbage where a write did not land (the size is updated before the content); a file
 *   created since the directory was last synced may be missing, and so may a delete be undone.
 * - ext4-ordered: metadata (sizes, truncates, creations, deletes) is journaled in call order and committed by any
 *   fsync, so the cut sees the metadata of one moment `t` between the last fsync and the cut; data=ordered writes an
 *   appending write's data before the size that covers it (so no garbage, and an append before `t` is whole);
 *   overwrites of existing data are not ordered at all (any subset, torn at sectors).
 */
export function rebuild(
  ops: readonly Op[],
  cut: number,
  model: Model,
  random: () => number,
  flavour: Flavour,
  initial: ReadonlyMap<string, Buffer> = new Map(),
): Map<string, Buffer | undefined> {
  const files = new Map<string, FileState>();
  let lastSync = -1;
  for (let i = 0; i < cut; i++) {
    const op = ops[i]!;
    if (op.kind === 'open') {
      const f = files.get(op.file);
      if (!f || f.deletedAt !== undefined) {
        // A file that was there before the recording began starts from what it held then (a migration's seed journal).
        const before = op.existed && !f ? initial.get(op.file) : undefined;
        files.set(op.file, {
          durable: before ? Buffer.from(before) : Buffer.alloc(0),
          pending: [],
          size: before?.length ?? 0,
          createdAt: op.existed ? undefined : i,
          dirDurable: op.existed,
          deletedAt: undefined,
        });
      }
    } else if (op.kind === 'write' || op.kind === 'truncate') {
      const f = files.get(op.file);
      if (!f) throw new Error(`powerloss log: ${op.kind} of ${op.file} before its open`);
      f.pending.push({ at: i, op, sizeBefore: f.size });
      f.size = op.kind === 'write' ? Math.max(f.size, op.offset + op.data.length) : op.size;
    } else if (op.kind === 'sync') {
      const f = files.get(op.file);
      if (!f) continue;
      let img: Buffer = f.durable;
      let len = img.length;
      for (const c of f.pending) {
        if (c.op.kind === 'write') ({ img, len } = put(img, len, c.op.offset, c.op.data));
        else len = Math.min(len, c.op.size);
      }
      f.durable = Buffer.from(img.subarray(0, len));
      f.pending = [];
      lastSync = i;
    } else if (op.kind === 'dirsync') {
      for (const f of files.values()) f.dirDurable = true;
      lastSync = i;
    } else if (op.kind === 'delete') {
      const f = files.get(op.file);
      if (f) f.deletedAt = i;
    }
  }
  const decide = (): 'whole' | 'dropped' | 'torn' => {
    if (flavour === 'all') return 'whole';
    if (flavour === 'none') return 'dropped';
    const r = random();
    return r < 0.4 ? 'whole' : r < 0.7 ? 'dropped' : 'torn';
  };
  // ext4: the moment whose metadata the journal committed: at or after the last fsync of any file.
  const metaAt = flavour === 'all' ? cut : flavour === 'none' ? lastSync + 1 : lastSync + 1 + Math.floor(random() * (cut - lastSync));
  const out = new Map<string, Buffer | undefined>();
  for (const [name, f] of files) {
    if (name.endsWith('-shm')) continue;
    const metaKnows = (at: number): boolean => (model === 'ext4-ordered' ? at < metaAt || at <= lastSync : false);
    if (f.deletedAt !== undefined) {
      const undone = model === 'sqlite' ? !f.dirDurable && random() < 0.5 : !metaKnows(f.deletedAt);
      if (!undone) {
        out.set(name, undefined);
        continue;
      }
    }
    if (f.createdAt !== undefined && !f.dirDurable) {
      const present = model === 'sqlite' ? flavour === 'all' || (flavour === 'random' && random() < 0.5) : metaKnows(f.createdAt);
      if (!present) {
        out.set(name, undefined);
        continue;
      }
    }
    let img: Buffer = Buffer.from(f.durable);
    let len = img.length;
    let metaSize = f.durable.length;
    for (const c of f.pending) {
      const known = model === 'ext4-ordered' && metaKnows(c.at);
      if (c.op.kind === 'truncate') {
        if (model === 'sqlite' ? decide() !== 'dropped' : known) len = Math.min(len, c.op.size);
        if (known) metaSize = c.op.size;
        continue;
      }
      const appends = c.op.offset + c.op.data.length > c.sizeBefore;
      if (known) metaSize = Math.max(metaSize, c.op.offset + c.op.data.length);
      const how = model === 'ext4-ordered' && appends && known ? 'whole' : decide();
      if (how === 'whole') {
        ({ img, len } = put(img, len, c.op.offset, c.op.data));
        continue;
      }
      const pieces = how === 'torn' ? tornPieces(c.op.offset, c.op.data, () => random() < 0.5) : [];
      if (model === 'sqlite' && appends && random() < 0.5) {
        // The size reached the disk before the content: what did not land reads as garbage.
        const garbage = Buffer.alloc(c.op.data.length);
        for (let b = 0; b < garbage.length; b++) garbage[b] = (b * 131 + c.at) & 0xff;
        const end = c.op.offset + c.op.data.length;
        const start = Math.max(len, c.op.offset);
        if (end > start) ({ img, len } = put(img, len, start, garbage.subarray(start - c.op.offset)));
      }
      for (const p of pieces) ({ img, len } = put(img, len, p.offset, p.data));
    }
    if (model === 'ext4-ordered') {
      // The size is the committed metadata's: an append after it is cut off; a grown file never shows garbage.
      if (len > metaSize) len = metaSize;
      else if (len < metaSize) ({ img, len } = put(img, len, len, Buffer.alloc(metaSize - len)));
    }
    out.set(name, Buffer.from(img.subarray(0, len)));
  }
  return out;
}

/** Indexes of the log's sync points (a file sync or a directory sync). */
export function syncPoints(ops: readonly Op[]): number[] {
  const out: number[] = [];
  ops.forEach((op, i) => {
    if (op.kind === 'sync' || op.kind === 'dirsync') out.push(i);
  });
  return out;
}
