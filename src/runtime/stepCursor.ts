// Replay's reader of journaled steps: a chunk of headers at a time as replay reaches them, ignoring the rows this
// attempt wrote; a large result is read by itself, only for the step replay returns it for.

import { ReadAhead, textSize } from './readAhead';
import { journalInvalid } from './json';
import type { ReplayStepHead } from './store/rows';
import type { JournalReader } from './store';

/** Results up to this many bytes come with their step's header; a longer one is read when its step is replayed. */
export const INLINE_RESULT_BYTES = 16 * 1024;

export class StepCursor {
  private chunk: ReplayStepHead[] = [];
  private start = -1;
  private end = -1;
  private readonly ahead = new ReadAhead();

  constructor(
    private readonly reader: JournalReader,
    private readonly runId: string,
    private readonly attempt: number,
    readonly count: number,
  ) {}

  get(idx: number): ReplayStepHead | undefined {
    if (idx >= this.count) return undefined;
    if (this.start < 0 || idx < this.start || idx >= this.end) {
      const n = this.ahead.rows;
      this.chunk = this.reader.replayStepHeads(this.runId, idx, idx + n, INLINE_RESULT_BYTES);
      this.start = idx;
      this.end = idx + n;
      this.ahead.update(this.chunk.length, textSize(this.chunk.map((r) => r.result)));
    }
    let row = this.chunk[idx - this.start];
    if (row?.idx !== idx) row = this.chunk.find((r) => r.idx === idx);
    return row && row.attempt < this.attempt ? row : undefined;
  }

  /** A step's journaled result (JSON text, or null for none): from its header, or read now when it was too long. */
  result(head: ReplayStepHead): string | null {
    if (head.large === null) return head.result;
    return this.readBack(head, this.reader.stepResult(this.runId, head.idx));
  }

  private readBack(head: ReplayStepHead, text: string | null | undefined): string {
    if (typeof text === 'string') return text;
    // Its header said it holds a long result: read again, it is gone or no longer text.
    throw journalInvalid({ runId: this.runId, table: 'steps', idx: head.idx, name: head.name, column: 'result' }, 'could not be read back');
  }
}
