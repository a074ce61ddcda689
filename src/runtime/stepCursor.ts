// Replay's reader of journaled steps: a chunk at a time as replay reaches them, ignoring the rows this attempt wrote.

import { ReadAhead, textSize } from './readAhead';
import type { ReplayStepRow } from './store/rows';
import type { JournalReader } from './store';

export class StepCursor {
  private chunk: ReplayStepRow[] = [];
  private start = -1;
  private end = -1;
  private readonly ahead = new ReadAhead();

  constructor(
    private readonly reader: JournalReader,
    private readonly runId: string,
    private readonly attempt: number,
    readonly count: number,
  ) {}

  get(idx: number): ReplayStepRow | undefined {
    if (idx >= this.count) return undefined;
    if (this.start < 0 || idx < this.start || idx >= this.end) {
      const n = this.ahead.rows;
      this.chunk = this.reader.replaySteps(this.runId, idx, idx + n);
      this.start = idx;
      this.end = idx + n;
      this.ahead.update(this.chunk.length, textSize(this.chunk.map((r) => r.result)));
    }
    let row = this.chunk[idx - this.start];
    if (row?.idx !== idx) row = this.chunk.find((r) => r.idx === idx);
    return row && row.attempt < this.attempt ? row : undefined;
  }
}
