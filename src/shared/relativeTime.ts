// "12s ago", "5m ago", "3h ago", then the date: how the CLI's listings and the extension's runs tree say when.

export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}
