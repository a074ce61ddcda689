// The journaled actions of a step being redone, read in start order a page at a time, so skipping the committed ones
// is not a query each: a redone step can hold thousands of committed actions that its script asks for again, in order.

import { READ_AHEAD_BYTES, ReadAhead, textSize } from './readAhead';
import type { JournalReader } from './store';
import type { ReplayActionRow } from './store/rows';

/** Past this many unclaimed rows, or this much text (a script asking in another order), stop prefetching. */
const MAX_WINDOW = 4096;
const MAX_WINDOW_BYTES = 4 * READ_AHEAD_BYTES;

export class StepActions {
  private readonly window = new Map<string, ReplayActionRow>();
  private afterSeq: number | undefined;
  private exhausted = false;
  private windowBytes = 0;
  private readonly ahead = new ReadAhead();

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
    if (this.afterSeq === undefined) {
      const first = this.reader.firstActionSeqOfStep(this.runId, this.stepIdx);
      if (first === undefined) {
        this.exhausted = true;
        return;
      }
      this.afterSeq = first - 1;
    }
    const page = this.ahead.rows;
    const rows = this.reader.replayActionsOfStep(this.runId, this.stepIdx, this.afterSeq, page);
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
