// The power-loss scenarios: small agents whose effects and acknowledgements write markers into the recording's log.

import { z } from 'zod';
import Database from 'better-sqlite3';
import * as path from 'node:path';
import { defineAction, defineAgent, type AgentDefinition } from '../../src/runtime/define';
import type { Durability } from '../../src/runtime/store';

/**
 * The outside system every scenario's effects go to: a count per key. Before a resume it is rebuilt from the effect
 * markers a cut kept, so it says what the provider had seen at the moment of the power cut.
 */
export const provider = {
  seen: new Map<string, number>(),
  /** Keys whose effect must never happen twice (non-idempotent); a repeated idempotent key is the provider's to absorb. */
  once: new Set<string>(),
  /** Called by execute right before the effect: the marker is in the log before anything the effect causes. */
  mark: (_text: string): void => undefined,
  reset(keys: Iterable<string>): void {
    this.seen = new Map([...keys].map((k) => [k, 1]));
    this.once = new Set();
  },
  apply(key: string, cls: string): { id: string } {
    this.mark(`effect ${cls} ${key}`);
    if (cls === 'non-idempotent') this.once.add(key);
    this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
    return { id: `done:${key}` };
  },
};

const Args = z.object({ n: z.number().int() });

const send = defineAction({
  type: 'powerloss.send',
  version: 1,
  effect: 'non-idempotent',
  args: Args,
  key: (a, run) => `send:${run.id}:${a.n}`,
  execute: (_a, { idempotencyKey }) => provider.apply(idempotencyKey, 'non-idempotent'),
  verify: (_a, { idempotencyKey }) => (provider.seen.has(idempotencyKey) ? { id: `done:${idempotencyKey}` } : undefined),
});

const put = defineAction({
  type: 'powerloss.put',
  version: 1,
  effect: 'idempotent',
  args: Args,
  key: (a, run) => `put:${run.id}:${a.n}`,
  execute: (_a, { idempotencyKey }) => provider.apply(idempotencyKey, 'idempotent'),
});

export interface Scenario {
  readonly name: string;
  readonly agent: AgentDefinition;
  readonly durability: Durability;
  /** Acknowledged commits that the docs let a power loss take until the WAL's next sync (group commit). */
  readonly lazyCommits: boolean;
  /** Started as a queued run that a worker claims, instead of `startRun`. */
  readonly claimed?: boolean;
}

/** The journal file a scenario writes; a WAL checkpoint opens its own connection to it. */
export const journalFile = { current: '' };

const ack = (what: string): void => provider.mark(`acked ${what}`);

function bracketAgent(name: string, n: number): AgentDefinition {
  return defineAgent({
    name,
    async run(run) {
      for (let i = 0; i < n; i++) {
        await run.step(`send ${i}`, async () => {
          const key = `send:${run.id}:${i}`;
          await run.do(send, { n: i });
          ack(`commit ${key}`);
        });
      }
      return { sent: n };
    },
  });
}

const checkpointAgent = defineAgent({
  name: 'powerloss-checkpoint',
  async run(run) {
    for (let i = 0; i < 12; i++) {
      await run.step(`state ${i}`, () => ({ i, blob: 'x'.repeat(1000 + i * 700) }));
      ack(`step ${i}`);
    }
    return {};
  },
});

const lazyAgent = defineAgent({
  name: 'powerloss-lazy',
  async run(run) {
    for (let i = 0; i < 8; i++) {
      await run.step(`put ${i}`, async () => {
        await run.do(put, { n: i });
        ack(`commit put:${run.id}:${i}`);
        await run.do(send, { n: i });
        ack(`commit send:${run.id}:${i}`);
      });
    }
    return {};
  },
});

/** Checkpoints the WAL into the database from a second connection between steps, as another process could. */
const walAgent = defineAgent({
  name: 'powerloss-wal',
  async run(run) {
    for (let i = 0; i < 8; i++) {
      await run.step(`send ${i}`, async () => {
        await run.do(send, { n: i });
        ack(`commit send:${run.id}:${i}`);
      });
      if (i % 3 === 2) {
        const other = new Database(journalFile.current);
        try {
          other.pragma(i === 5 ? 'wal_checkpoint(TRUNCATE)' : 'wal_checkpoint(RESTART)');
        } finally {
          other.close();
        }
      }
    }
    return {};
  },
});

export const SCENARIOS: readonly Scenario[] = [
  { name: 'bracket', agent: bracketAgent('powerloss-bracket', 10), durability: 'full', lazyCommits: false },
  { name: 'checkpoint', agent: checkpointAgent, durability: 'full', lazyCommits: false },
  { name: 'group-commit', agent: bracketAgent('powerloss-group', 10), durability: 'group', lazyCommits: true },
  { name: 'lazy-idempotent', agent: lazyAgent, durability: 'full', lazyCommits: false },
  { name: 'wal-checkpoint', agent: walAgent, durability: 'full', lazyCommits: false },
  { name: 'worker-claim', agent: bracketAgent('powerloss-claimed', 6), durability: 'full', lazyCommits: false, claimed: true },
];

export function journalOf(dir: string): string {
  return path.join(dir, 'journal.db');
}
