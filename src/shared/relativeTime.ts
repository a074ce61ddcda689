// "12s ago", "5m ago", "3h ago", then the date: how the CLI's listings and the extension's runs tree say when; and how
// long a wait is (a sleep's time left), for the debugger and the tree alike.

export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** A duration for people: `850 ms`, `42 s`, `15 min`, `2 h 5 min`, `3 d 1 h`. */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
  const d = Math.floor(h / 24);
  return `${d} d${h % 24 ? ` ${h % 24} h` : ''}`;
}

/** When a wake time is, for a tree row: `2026-12-03 14:00:05 (in 2 h 59 min)`, or `… (due)` once it passed. */
export function untilWords(at: number, now = Date.now()): string {
  const when = new Date(at).toISOString().slice(0, 19).replace('T', ' ');
  return `${when} UTC (${at > now ? `in ${durationWords(at - now)}` : 'due'})`;
}
