// How many journal rows replay reads at once: few at first, doubling while reads stay light, shrinking when rows are
// big, so resuming a run of small steps costs one query per 512 of them and a run of 1 MB checkpoints never holds
// hundreds of megabytes at once.

export const READ_AHEAD_BYTES = 8 * 1024 * 1024;

export class ReadAhead {
  private n: number;

  constructor(
    private readonly first = 16,
    private readonly max = 512,
    private readonly maxBytes = READ_AHEAD_BYTES,
  ) {
    this.n = first;
  }

  get rows(): number {
    return this.n;
  }

  /** Sizes the next read from the last one: `rows` rows came back holding about `bytes` of text. */
  update(rows: number, bytes: number): void {
    if (bytes > this.maxBytes) this.n = Math.max(1, Math.floor((this.n * this.maxBytes) / bytes));
    else if (rows >= this.n && bytes * 2 <= this.maxBytes) this.n = Math.min(this.max, this.n * 2);
  }
}

/** Text held by journal rows, in UTF-16 code units (close enough to bytes to bound memory). */
export function textSize(values: ReadonlyArray<string | null>): number {
  let n = 0;
  for (const v of values) if (v !== null) n += v.length;
  return n;
}
