// The work every engine row measures: one small effect, the same effect as a plain call, and agent states of a set size.

import { z } from 'zod';
import { defineAction, defineAgent, type AgentDefinition } from '../src/runtime';
import { cpuUs, nowUs } from './measure';

export interface Message {
  readonly to: string;
  readonly body: string;
}

/** A stand-in outside system: remembers the last keys it accepted, like an outbox would. */
const outbox: string[] = [];

/** The effect itself, the same for Logbook and for the plain baseline. */
export function deliver(msg: Message, key: string): { messageId: string } {
  outbox.push(key);
  if (outbox.length > 1024) outbox.length = 0;
  return { messageId: messageIdOf(msg, key) };
}

/** The id the stand-in gives a message: of the request alone, so the raw baselines can write the same result. */
const messageIdOf = (msg: Message, key: string): string => `m-${key.length}-${msg.to.length}`;

const args = z.object({ to: z.string(), body: z.string() });

export const sendMessage = defineAction({
  type: 'bench.send',
  version: 1,
  effect: 'non-idempotent',
  args,
  key: (a, run) => sendKey(run.id, a.to),
  execute: (a, { idempotencyKey }) => deliver(a, idempotencyKey),
  verify: () => undefined,
});

export const lookupMessage = defineAction({
  type: 'bench.lookup',
  version: 1,
  effect: 'read-only',
  args,
  key: (a, run) => `lookup:${run.id}:${a.to}`,
  execute: (a, { idempotencyKey }) => deliver(a, idempotencyKey),
});

export function message(i: number): Message {
  return { to: `user${i}@example.com`, body: `Hello user ${i}, our spring issue is out.` };
}

const sendKey = (runId: string, to: string): string => `send:${runId}:${to}`;

/**
 * The `i`-th sendMessage of run `runId` as the engine journals it: its key, args and result, of the same bytes, so that
 * the raw-SQL baselines (bench/rawBracket.ts, rawV2.ts) write rows and index entries as long as the engine's.
 */
export function journaledSend(runId: string, i: number): { readonly id: string; readonly args: string; readonly result: string } {
  const msg = message(i);
  const id = sendKey(runId, msg.to);
  return { id, args: JSON.stringify(msg), result: JSON.stringify({ messageId: messageIdOf(msg, id) }) };
}

/** The plain baseline: the same effect through an awaited function call, per call in µs (wall, and CPU into `cpu`). */
export async function plainCalls(count: number, cpu: number[] = []): Promise<number[]> {
  const times: number[] = [];
  // Awaited like run.do is, so the baseline pays the same promise round trip.
  const call = (msg: Message, key: string): Promise<{ messageId: string }> => Promise.resolve(deliver(msg, key));
  for (let i = 0; i < count; i++) {
    const msg = message(i);
    const c0 = cpuUs();
    const t0 = nowUs();
    await call(msg, `send:plain:${msg.to}`);
    times.push(nowUs() - t0);
    cpu.push(cpuUs() - c0);
  }
  return times;
}

/** An agent doing `count` actions of one kind inside one step, timing each run.do as the script sees it. */
export function actionAgent(kind: 'non-idempotent' | 'read-only', count: number, times: number[], cpu: number[] = []): AgentDefinition {
  const action = kind === 'read-only' ? lookupMessage : sendMessage;
  return defineAgent({
    name: `bench-${kind}`,
    input: z.object({}),
    async run(run) {
      await run.step('actions', async () => {
        for (let i = 0; i < count; i++) {
          const msg = message(i);
          const c0 = cpuUs();
          const t0 = nowUs();
          await run.do(action, msg);
          times.push(nowUs() - t0);
          cpu.push(cpuUs() - c0);
        }
      });
    },
  });
}

/** Agent state of about `bytes` of JSON: a list of chat-like messages, the shape agent checkpoints usually hold. */
export function makeState(bytes: number, seed = 0): { turn: number; messages: Array<{ id: number; role: string; content: string }> } {
  const messages: Array<{ id: number; role: string; content: string }> = [];
  const item = 256;
  const n = Math.max(1, Math.round(bytes / item));
  const filler = 'lorem ipsum dolor sit amet '.repeat(12).slice(0, item - 48);
  for (let i = 0; i < n; i++) messages.push({ id: seed * n + i, role: i % 2 ? 'assistant' : 'user', content: filler });
  return { turn: seed, messages };
}

/** An agent of `count` steps, each returning (and so checkpointing) a state of `bytes`, timing each run.step. */
export function checkpointAgent(bytes: number, count: number, times: number[], cpu: number[] = []): AgentDefinition {
  const states = Array.from({ length: count }, (_, i) => makeState(bytes, i));
  return defineAgent({
    name: `bench-checkpoint-${bytes}`,
    input: z.object({}),
    async run(run) {
      for (let i = 0; i < count; i++) {
        const state = states[i];
        const c0 = cpuUs();
        const t0 = nowUs();
        await run.step(`state ${i}`, () => state);
        times.push(nowUs() - t0);
        cpu.push(cpuUs() - c0);
      }
    },
  });
}
