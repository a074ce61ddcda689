// The journaled actions of a step being redone, read in start order a page at a time, so skipping the committed ones
// is not a query each: a redone step can hold thousands of committed actions that its script asks for again, in order.

import { READ_AHEAD_BYTES, ReadAhead, textSize } from './readAhead';
import type { JournalReader } from './store';
import type { ActionRow, ReplayActionRow } from './store/rows';

/** Past this many unclaimed rows, or this much text (a script asking in another order), stop prefetching. */
const MAX_WINDOW = 4096;
const MAX_WINDOW_BYTES = 4 * READ_AHEAD_BYTES;

export class StepActions {
  private readonly window = new Map<string, ReplayActionRow>();
  /** The seq of the last row read (none yet: every seq is after it). */
  private afterSeq = Number.MIN_SAFE_INTEGER;
  private exhausted = false;
  private windowBytes = 0;
  private readonly ahead = new ReadAhead();
  /**
   * Why a page could not be read (a damaged row, a storage failure), once one could not: it may hide the row a key
   * names, so the full path must not take that key for a new action (see RunSession.runAction). Nothing more is
   * handed out after it.
   */
  failure: unknown;

  constructor(
    private readonly reader: JournalReader,
    private readonly runId: string,
    private readonly stepIdx: number,
    private readonly attempt: number,
  ) {}

  /**
   * Hands out the row an earlier attempt journaled for `id` in this step, once; undefined means "not here, ask the
   * journal" (a new action, one from another step, or one already handed out, whose row this attempt may have changed).
   * Only the fast path takes rows from here; the full path always reads the action's current row.
   */
  take(id: string): ReplayActionRow | undefined {
    const row = this.peek(id);
    if (row) {
      this.window.delete(id);
      this.windowBytes -= size(row);
    }
    return row;
  }

  /** Like take, without handing the row out: a later take still returns it. */
  peek(id: string): ReplayActionRow | undefined {
    for (;;) {
      const row = this.window.get(id);
      if (row) return row;
      if (this.exhausted) return undefined;
      this.load();
    }
  }

  private load(): void {
    const page = this.ahead.rows;
    let rows: ReplayActionRow[];
    try {
      rows = this.reader.replayActionsOfStep(this.runId, this.stepIdx, this.afterSeq, page);
    } catch (err) {
      this.failure = err;
      this.exhausted = true;
      this.window.clear();
      this.windowBytes = 0;
      throw err;
    }
    let bytes = 0;
    for (const r of rows) {
      const n = size(r);
      bytes += n;
      // Rows this attempt wrote are not "journaled before": the reader has them fresh.
      if (r.attempt < this.attempt) {
        this.window.set(r.id, r);
        this.windowBytes += n;
      }
      this.afterSeq = r.seq;
    }
    this.ahead.update(rows.length, bytes);
    if (rows.length < page) this.exhausted = true;
    if (this.window.size > MAX_WINDOW || this.windowBytes > MAX_WINDOW_BYTES) {
      this.window.clear();
      this.windowBytes = 0;
      this.exhausted = true;
    }
  }
}

function size(r: ReplayActionRow): number {
  return textSize([r.args, r.result]);
}

/**
 * The unfinished actions earlier attempts left in a redone step and no run.do of this attempt has reached: read when a
 * new action first needs them (the version check), not when the step starts, so a step whose every action is replayed
 * never reads them. Rows no run.do reached are as they were when the step started: only the lease holder writes them.
 */
export class OpenActions {
  private rows: Map<string, ActionRow> | undefined;
  private readonly reached = new Set<string>();

  constructor(private readonly read: () => readonly ActionRow[]) {}

  /** A run.do reached this action's row: it is not open any more. */
  reach(id: string): void {
    if (this.rows) this.rows.delete(id);
    else this.reached.add(id);
  }

  values(): IterableIterator<ActionRow> {
    if (!this.rows) {
      this.rows = new Map();
      for (const a of this.read()) if (!this.reached.has(a.id)) this.rows.set(a.id, a);
      this.reached.clear();
    }
    return this.rows.values();
  }
}
