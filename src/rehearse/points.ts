// Fault points: read from a traced run, chosen all or by a seeded sample, and a small PRNG so choices reproduce.

import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import { formatCrashSpec, FAULT_POINTS, type FaultPoint } from '../runtime/faults';
import type { Point } from './reportSchema';

/** Reads the JSON lines written under $LOGBOOK_TRACE_FAULTS by one process, as crash points of that process. */
export function readTrace(file: string, processIndex: number): Point[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Point[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const hit = JSON.parse(line) as { point: string; target: string; occurrence: number };
    if (!(FAULT_POINTS as readonly string[]).includes(hit.point)) continue;
    const spec = formatCrashSpec({ point: hit.point as FaultPoint, target: hit.target, occurrence: hit.occurrence });
    out.push({ process: processIndex, spec, point: hit.point, target: hit.target, occurrence: hit.occurrence });
  }
  return out;
}

/** mulberry32 over a seed hashed from any string: tiny, fast and the same everywhere. */
export function rng(seed: string): () => number {
  let a = createHash('sha256').update(seed).digest().readUInt32LE(0);
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** N distinct points chosen with the seed, kept in the run's own order so the report reads top to bottom. */
export function sample(points: readonly Point[], n: number, seed: string): Point[] {
  if (n >= points.length) return [...points];
  const next = rng(seed);
  const idx = points.map((_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(next() * (idx.length - i));
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return idx
    .slice(0, n)
    .sort((x, y) => x - y)
    .map((i) => points[i] as Point);
}

export function pointLabel(p: Point): string {
  return p.process > 1 ? `${p.spec} (process ${p.process})` : p.spec;
}
