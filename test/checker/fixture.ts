// The checker's generic agent script: built from the case the checker hands over in-process, or from files in a child.

import * as fs from 'node:fs';
import { buildAgent, type Host } from './agent';
import type { AgentJ, When } from './spec';
import { SqliteLog, World, type Sabotage } from './world';

const HANDOFF = Symbol.for('agent-logbook.checker.handoff');

/**
 * In a child process: the world is a SQLite file the checker reads afterwards. $LOGBOOK_CHECKER_HOLD=<n>:<file> holds
 * provider call #n (from 0) until <file> exists, writing <file>.held first (JSON: this pid and the call's key): a driver
 * kept in flight while the checker starts a second one, or freezes it. It is held before its effect, at the start of
 * execute, or with $LOGBOOK_CHECKER_HOLD_AT=window between its lease check and its send (see World.froze).
 */
function childHost(): Host {
  const sabotage = JSON.parse(process.env.LOGBOOK_CHECKER_SABOTAGE ?? '{}') as Sabotage;
  const world = new World(new SqliteLog(process.env.LOGBOOK_CHECKER_WORLD ?? 'world.db'), sabotage);
  const [n, file] = (process.env.LOGBOOK_CHECKER_HOLD ?? '').split(/:(.*)/s);
  const inWindow = process.env.LOGBOOK_CHECKER_HOLD_AT === 'window';
  let calls = 0;
  let heldKey: string | undefined;
  const hold = async (key: string): Promise<void> => {
    if (!file) return;
    fs.writeFileSync(`${file}.held`, JSON.stringify({ pid: process.pid, key }));
    while (!fs.existsSync(file)) await new Promise((r) => setTimeout(r, 20));
  };
  const sleepsAtLeast = Number(process.env.LOGBOOK_CHECKER_SLEEP_MIN_MS ?? 0);
  return {
    world,
    proc: {
      name: `pid${process.pid}`,
      // $LOGBOOK_CHECKER_SLEEP_MIN_MS: this process's sleeps last at least that long (a schedule catches it asleep).
      sleepMs: (ms) => Math.max(ms, sleepsAtLeast),
      point: async (when: When, call) => {
        if (when !== 'before-effect' || !file || String(calls++) !== n) return;
        if (!inWindow) return hold(call.key);
        heldKey = call.key;
      },
      window: (call) => {
        if (heldKey === undefined || call.key !== heldKey) return undefined;
        heldKey = undefined;
        return hold(call.key);
      },
    },
  };
}

const handed = (globalThis as { [HANDOFF]?: Host & { spec: AgentJ } })[HANDOFF];
const spec = handed?.spec ?? (JSON.parse(fs.readFileSync(process.env.LOGBOOK_CHECKER_SPEC ?? 'spec.json', 'utf8')) as AgentJ);

export default buildAgent(spec, handed ?? childHost());
