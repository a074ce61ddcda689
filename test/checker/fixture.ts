// The checker's generic agent script: built from the case the checker hands over in-process, or from files in a child.

import * as fs from 'node:fs';
import { buildAgent, type Host } from './agent';
import type { AgentJ, When } from './spec';
import { SqliteLog, World } from './world';

const HANDOFF = Symbol.for('agent-logbook.checker.handoff');

/**
 * In a child process: the world is a SQLite file the checker reads afterwards. $LOGBOOK_CHECKER_HOLD=<n>:<file> holds
 * provider call #n (from 0) before its effect until <file> exists, writing <file>.held first: a driver kept in flight
 * while the checker starts a second one.
 */
function childHost(): Host {
  const world = new World(new SqliteLog(process.env.LOGBOOK_CHECKER_WORLD ?? 'world.db'));
  const [n, file] = (process.env.LOGBOOK_CHECKER_HOLD ?? '').split(/:(.*)/s);
  let calls = 0;
  return {
    world,
    proc: {
      name: `pid${process.pid}`,
      point: async (when: When) => {
        if (when !== 'before-effect') return;
        if (file && String(calls++) === n) {
          fs.writeFileSync(`${file}.held`, String(process.pid));
          while (!fs.existsSync(file)) await new Promise((r) => setTimeout(r, 20));
        }
      },
    },
  };
}

const handed = (globalThis as { [HANDOFF]?: Host & { spec: AgentJ } })[HANDOFF];
const spec = handed?.spec ?? (JSON.parse(fs.readFileSync(process.env.LOGBOOK_CHECKER_SPEC ?? 'spec.json', 'utf8')) as AgentJ);

export default buildAgent(spec, handed ?? childHost());
