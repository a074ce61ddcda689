// Timing primitives for the benchmark: a microsecond clock, medians and percentiles, and number formatting.

/** Microseconds since an arbitrary origin, from the monotonic high-resolution clock. */
export function nowUs(): number {
  return Number(process.hrtime.bigint()) / 1000;
}

/** CPU time (user + system) this process has used, µs. On a shared machine it leaves out time spent descheduled. */
export function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100); NaN for an empty list so a missing figure never looks like a fast one. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Formats a duration given in microseconds with a unit that keeps three significant digits. */
export function fmtUs(us: number): string {
  if (!Number.isFinite(us)) return 'n/a';
  if (us < 10) return `${us.toFixed(2)} µs`;
  if (us < 1000) return `${us.toFixed(1)} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return 'n/a';
  return r < 10 ? `${r.toFixed(2)}×` : `${r.toFixed(1)}×`;
}

export function fmtBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(0)} KiB`;
  return `${n} B`;
}

/**
 * Between two probes: collect garbage (when node runs with --expose-gc, as `npm run bench` does) and let timers and
 * I/O callbacks run, so one probe's leftovers (the GC debt of 1 MB states, say) are not charged to the next.
 */
export function breathe(): Promise<void> {
  (globalThis as { gc?: () => void }).gc?.();
  return new Promise((resolve) => setImmediate(resolve));
}
