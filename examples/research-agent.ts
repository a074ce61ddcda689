// Example: a research agent whose model calls are journaled, so a resume never pays for a completion twice.

import { z } from 'zod';
import { defineAction, defineAgent } from 'agent-logbook';
import { model } from './providers/model';
import { corpus } from './providers/corpus';
import { notes } from './providers/notes';

// Idempotent: the model gateway returns the paid-for answer for a repeated key. Committed calls are never re-sent.
const complete = defineAction({
  type: 'model.complete',
  version: 1,
  effect: 'idempotent',
  args: z.object({ purpose: z.string(), prompt: z.string(), maxWords: z.number().int().positive() }),
  key: (a, run) => `model:${run.id}:${a.purpose}`,
  execute: (a, { idempotencyKey }) => model.complete({ prompt: a.prompt, maxWords: a.maxWords, idempotencyKey }),
});

// Read-only: searching changes nothing, so it is recorded for visibility and simply runs again after a crash.
const search = defineAction({
  type: 'corpus.search',
  version: 1,
  effect: 'read-only',
  args: z.object({ query: z.string() }),
  key: (a, run) => `search:${run.id}:${a.query}`,
  execute: (a) => corpus.search(a.query),
});

const saveReport = defineAction({
  type: 'notes.save',
  version: 1,
  effect: 'idempotent',
  args: z.object({ title: z.string(), text: z.string() }),
  key: (a, run) => `report:${run.id}:${a.title}`,
  execute: (a, { idempotencyKey }) => notes.save({ title: a.title, text: a.text, idempotencyKey }),
});

export default defineAgent({
  name: 'research-agent',
  input: z.object({
    question: z.string().default('How do durable agent runs avoid repeating side effects after a crash?'),
    sources: z.number().int().min(1).max(5).default(3),
  }),
  async run(run, input) {
    const plan = await run.step('plan research', () =>
      run.do(complete, { purpose: 'plan', prompt: `List ${input.sources} angles to research: ${input.question}`, maxWords: 12 }),
    );
    const angles = [...new Set(plan.text.split(' '))].slice(0, input.sources);
    const findings: Array<{ source: string; summary: string; tokens: number }> = [];
    for (const [i, angle] of angles.entries()) {
      const doc = await run.step(`search ${i + 1}`, () => run.do(search, { query: angle }));
      const summary = await run.step(`summarise ${i + 1}`, () =>
        run.do(complete, { purpose: `summarise:${i + 1}:${doc.id}`, prompt: `Summarise for "${angle}": ${doc.text}`, maxWords: 16 }),
      );
      findings.push({ source: doc.id, summary: summary.text, tokens: summary.tokens });
    }
    const answer = await run.step('draft answer', () =>
      run.do(complete, { purpose: 'answer', prompt: `Answer "${input.question}" from: ${findings.map((f) => f.summary).join(' | ')}`, maxWords: 40 }),
    );
    const saved = await run.step('save report', () => run.do(saveReport, { title: input.question, text: answer.text }));
    return {
      answer: answer.text,
      sources: findings.map((f) => f.source),
      noteId: saved.noteId,
      modelCalls: findings.length + 2,
      tokens: plan.tokens + answer.tokens + findings.reduce((s, f) => s + f.tokens, 0),
    };
  },
  probe: () => ({
    'model.complete': model.record().completions.map((c) => c.key),
    'notes.save': notes.record().reports.map((r) => r.key),
  }),
});
