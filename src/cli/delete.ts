// `logbook delete <run-id>`: removes a run and its whole journal, refused while a live process drives it.

import { ErrorCodes, LogbookError } from '../runtime/errors';
import { openStore } from '../runtime/store';
import { dbPath } from './journalOption';
import { parseCommandArgs } from './commandArgs';
import type { CommandModule } from './journalOption';

export const deleteCommand: CommandModule = {
  name: 'delete',
  usage: 'logbook delete <run-id> [--json]',
  run(args, io) {
    const parsed = parseCommandArgs(
      args,
      { journal: { type: 'string' }, json: { type: 'boolean' } },
      'Run `logbook --help` for the commands and their options.',
    );
    const [runId, ...extra] = parsed.positionals;
    if (!runId || extra.length) throw new LogbookError(ErrorCodes.USAGE, 'Expected exactly one run id.', 'Write `logbook delete <run-id>`.');
    const store = openStore(dbPath(parsed.values.journal));
    try {
      const counts = store.deleteRun(runId);
      io.out(
        parsed.values.json
          ? JSON.stringify({ deleted: runId, ...counts }, null, 2)
          : `deleted run ${runId} (${counts.steps} steps, ${counts.actions} actions, ${counts.events} events)`,
      );
      return Promise.resolve(0);
    } finally {
      store.close();
    }
  },
};
