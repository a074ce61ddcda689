// Hit conditions as the JavaScript debugger writes them: "31", "==31", ">=5", ">5", "<3", "<=3", "%10".

export type HitCondition = (count: number) => boolean;

/** Parses a hit condition; a bare number means "exactly the nth hit". Returns undefined when unreadable. */
export function parseHitCondition(text: string): HitCondition | undefined {
  const m = /^\s*(==|===|=|>=|>|<=|<|%)?\s*(\d+)\s*$/.exec(text);
  if (!m?.[2]) return undefined;
  const n = Number(m[2]);
  switch (m[1]) {
    case '>=':
      return (c) => c >= n;
    case '>':
      return (c) => c > n;
    case '<=':
      return (c) => c <= n;
    case '<':
      return (c) => c < n;
    case '%':
      return n === 0 ? undefined : (c) => c % n === 0;
    default:
      return (c) => c === n;
  }
}
