// An example model endpoint, local and deterministic: same prompt, same completion. Every billed call is recorded.

import { createHash } from 'node:crypto';
import { readState, writeState } from './store';

interface ModelState {
  /** Billed completions, one per idempotency key. */
  completions: Array<{ key: string; tokens: number }>;
  /** Calls answered from the gateway's cache because their key was already paid for. */
  cacheHits: number;
  billedTokens: number;
}

const FILE = 'model-calls.json';
const load = (): ModelState => readState<ModelState>(FILE, { completions: [], cacheHits: 0, billedTokens: 0 });

const WORDS = [
  'journal', 'resume', 'replay', 'checkpoint', 'idempotency', 'key', 'verify', 'crash', 'bracket', 'effect', 'durable',
  'step', 'action', 'commit', 'reconcile', 'provider', 'duplicate', 'compensation', 'inverse', 'lease', 'attempt', 'record',
];

/** Deterministic text from the prompt's hash: a stand-in for a model, so runs and rehearsals are reproducible. */
function generate(prompt: string, words: number): string {
  const h = createHash('sha256').update(prompt).digest();
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[(h[i % h.length] ?? 0) % WORDS.length] ?? 'step');
  return out.join(' ');
}

export const model = {
  /**
   * One completion. The gateway honours idempotency keys (a repeated key returns the paid-for answer, unbilled),
   * so a model call can be journaled as idempotent.
   */
  complete(req: { prompt: string; maxWords: number; idempotencyKey: string }): { text: string; tokens: number } {
    const state = load();
    const text = generate(req.prompt, req.maxWords);
    const tokens = req.maxWords + Math.ceil(req.prompt.length / 4);
    if (state.completions.some((c) => c.key === req.idempotencyKey)) state.cacheHits++;
    else {
      state.completions.push({ key: req.idempotencyKey, tokens });
      state.billedTokens += tokens;
    }
    writeState(FILE, state);
    return { text, tokens };
  },

  record(): ModelState {
    return load();
  },
};
