// An example document search over a small fixed corpus: a read-only tool, safe to call again.

export interface Doc {
  readonly id: string;
  readonly title: string;
  readonly text: string;
  readonly tags: readonly string[];
}

const DOCS: readonly Doc[] = [
  { id: 'doc-wal', title: 'Write-ahead logging', text: 'A write-ahead log makes a change durable before it is applied, so a crash can be recovered by replay.', tags: ['journal', 'durable', 'commit', 'crash', 'record'] },
  { id: 'doc-keys', title: 'Idempotency keys', text: 'An idempotency key lets a server refuse a duplicate request: the same key returns the first result.', tags: ['idempotency', 'key', 'duplicate', 'provider', 'effect'] },
  { id: 'doc-saga', title: 'Sagas and compensation', text: 'A saga undoes completed steps with compensating actions, newest first, when a later step fails.', tags: ['compensation', 'inverse', 'step', 'action'] },
  { id: 'doc-2pc', title: 'In-doubt transactions', text: 'A participant that crashed after voting is in doubt until it learns the outcome from the coordinator.', tags: ['verify', 'reconcile', 'bracket', 'lease', 'attempt'] },
  { id: 'doc-replay', title: 'Deterministic replay', text: 'Workflow engines replay the history of a run: completed steps return their recorded results.', tags: ['resume', 'replay', 'checkpoint'] },
];

const words = (s: string): string[] => s.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 3);

export const corpus = {
  /** The best-matching document by shared words (ties go to the earlier one). */
  search(query: string): Doc {
    const q = new Set(words(query));
    let best: Doc = DOCS[0] as Doc;
    let bestScore = -1;
    for (const d of DOCS) {
      const score = words(`${d.title} ${d.text} ${d.tags.join(' ')}`).filter((w) => q.has(w)).length;
      if (score > bestScore) {
        best = d;
        bestScore = score;
      }
    }
    return best;
  },
};
