// `logbook delete <run-id>`: removes a run and its whole journal, refused while a live process drives it.

import { parseArgs } from 'node:util';
import { ErrorCodes, LogbookError, describe, runNotFound } from '../runtime/errors';
import { openStore } from '../runtime/store';
import { dbPath } from './command';
import type { CommandModule } from './command';

export const deleteCommand: CommandModule = {
  name: 'delete',
  usage: 'logbook delete <run-id> [--json]',
  run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, options: { db: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
    } catch (err) {
      throw new LogbookError(ErrorCodes.USAGE, describe(err), 'Run `logbook --help` for the commands and their options.');
    }
    const [runId, ...extra] = parsed.positionals;
    if (!runId || extra.length) throw new LogbookError(ErrorCodes.USAGE, 'Expected exactly one run id.', 'Write `logbook delete <run-id>`.');
    const store = openStore(dbPath(parsed.values.db));
    try {
      const counts = { steps: 0, actions: 0, events: 0 };
      const tx = store.db.transaction(() => {
        const row = store.reader.run(runId);
        if (!row) throw runNotFound(runId);
        if (store.reader.view(row).leaseLive) {
          throw new LogbookError(ErrorCodes.LEASE_HELD, `Run ${runId} is being driven by ${row.lease_owner ?? 'another process'}; it cannot be deleted now.`, 'Stop that process (or kill the run) first, then delete it.', { runId });
        }
        counts.events = store.db.prepare('DELETE FROM events WHERE run_id = ?').run(runId).changes;
        counts.actions = store.db.prepare('DELETE FROM actions WHERE run_id = ?').run(runId).changes;
        counts.steps = store.db.prepare('DELETE FROM steps WHERE run_id = ?').run(runId).changes;
        store.db.prepare('DELETE FROM runs WHERE id = ?').run(runId);
      });
      tx.immediate();
      store.db.changed(runId);
      io.out(parsed.values.json ? JSON.stringify({ deleted: runId, ...counts }, null, 2) : `deleted run ${runId} (${counts.steps} steps, ${counts.actions} actions, ${counts.events} events)`);
      return Promise.resolve(0);
    } finally {
      store.close();
    }
  },
};
