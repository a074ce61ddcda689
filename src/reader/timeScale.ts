// The timeline's time axis: long quiet stretches (a debugger pause, a slow effect) compressed to a marked gap, and ticks.

/** A stretch of an attempt on the axis: `x0`..`x1` in percent of the width; gaps are compressed. */
export interface Segment {
  readonly start: number;
  readonly end: number;
  readonly x0: number;
  readonly x1: number;
  readonly gap: boolean;
}

export interface Tick {
  readonly x: number;
  readonly label: string;
}

export interface Scale {
  readonly segments: Segment[];
  readonly ticks: Tick[];
}

/** Quiet for this long (and far longer than the attempt's usual spacing) is shown as a gap, not to scale. */
export const QUIET_MS = 2000;
const QUIET_FACTOR = 10;
const GAP_PCT = 4;
const MAX_GAPS_PCT = 40;
const TICKS = 6;

/** The quiet stretches between the times anything happened in an attempt (sorted, from its start to its end). */
export function quietGaps(times: readonly number[]): Array<{ start: number; end: number }> {
  const t = [...new Set(times)].sort((a, b) => a - b);
  const steps = t
    .slice(1)
    .map((v, i) => v - (t[i] ?? v))
    .filter((d) => d > 0)
    .sort((a, b) => a - b);
  const median = steps[Math.floor(steps.length / 2)] ?? 0;
  const gaps: Array<{ start: number; end: number }> = [];
  for (let i = 1; i < t.length; i++) {
    const a = t[i - 1] ?? 0;
    const b = t[i] ?? 0;
    if (b - a >= QUIET_MS && b - a >= median * QUIET_FACTOR) gaps.push({ start: a, end: b });
  }
  return gaps;
}

/** A tick's elapsed time, precise enough that neighbours `step` apart differ (+5.93 s, +5.94 s after a long gap). */
export function tickLabel(k: number, step: number): string {
  if (k === 0) return '0';
  if (k < 1000) return `+${Math.round(k)} ms`;
  const d = step >= 1000 ? 0 : Math.min(3, Math.ceil(-Math.log10(step / 1000)));
  if (k < 60_000) return `+${(k / 1000).toFixed(d)} s`;
  const min = Math.floor(k / 60_000);
  return `+${min} min ${((k - min * 60_000) / 1000).toFixed(d)} s`;
}

/** 1, 2 or 5 times a power of ten: the tick spacing that gives about `n` ticks over `span` ms. */
function niceStep(span: number, n: number): number {
  const raw = Math.max(1, span / n);
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
}

/**
 * Lays out an attempt from `start` to `end`: gaps get a fixed small width, the time that was busy shares the rest
 * in proportion. Ticks mark elapsed wall time (gaps included) at round values inside the busy stretches.
 */
export function scaleOf(start: number, end: number, gaps: ReadonlyArray<{ start: number; end: number }>): Scale {
  const total = Math.max(1, end - start);
  const inside = gaps.filter((g) => g.start >= start && g.end <= end && g.end > g.start).sort((a, b) => a.start - b.start);
  const gapPct = inside.length ? Math.min(GAP_PCT, MAX_GAPS_PCT / inside.length) : 0;
  const busy = Math.max(1, total - inside.reduce((s, g) => s + (g.end - g.start), 0));
  const perMs = (100 - gapPct * inside.length) / busy;
  const segments: Segment[] = [];
  let t = start;
  let x = 0;
  const addBusy = (to: number): void => {
    if (to <= t) return;
    const w = (to - t) * perMs;
    segments.push({ start: t, end: to, x0: x, x1: x + w, gap: false });
    x += w;
    t = to;
  };
  for (const g of inside) {
    addBusy(g.start);
    segments.push({ start: g.start, end: g.end, x0: x, x1: x + gapPct, gap: true });
    x += gapPct;
    t = g.end;
  }
  addBusy(Math.max(end, t));
  if (segments.length === 0) segments.push({ start, end: start + total, x0: 0, x1: 100, gap: false });
  const step = niceStep(busy, TICKS);
  const ticks: Tick[] = [];
  for (const s of segments) {
    if (s.gap) continue;
    for (let k = Math.ceil((s.start - start) / step) * step; start + k <= s.end; k += step)
      ticks.push({ x: xAt(segments, start + k), label: tickLabel(k, step) });
  }
  return { segments, ticks };
}

/** Where time `t` falls on the axis, in percent: linear inside each segment. */
export function xAt(segments: readonly Segment[], t: number): number {
  for (const s of segments) {
    if (t <= s.end) return t <= s.start ? s.x0 : s.x0 + ((t - s.start) / Math.max(1, s.end - s.start)) * (s.x1 - s.x0);
  }
  return segments[segments.length - 1]?.x1 ?? 100;
}
