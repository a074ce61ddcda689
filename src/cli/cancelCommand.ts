// `logbook cancel <run-id>`: stops a run for good (at once, or at a live run's next boundary), optionally compensating it.

import { EXIT, ErrorCodes, LogbookError, runNotFound } from '../runtime/errors';
import { cancelRunAndWait } from '../runtime/cancel';
import { openStore } from '../runtime/store';
import { loadScript } from '../loader/loadScript';
import { dbPath, setStateDir } from './journalOption';
import { parseCommandArgs } from './commandArgs';
import type { CommandModule } from './journalOption';
import { runStatusWord } from './format';

export const cancelCommand: CommandModule = {
  name: 'cancel',
  usage: 'logbook cancel <run-id> [--compensate] [--reason TEXT] [--no-wait] [--script F] [--json]',
  async run(args, io) {
    const parsed = parseCommandArgs(
      args,
      {
        journal: { type: 'string' },
        json: { type: 'boolean' },
        compensate: { type: 'boolean' },
        reason: { type: 'string' },
        'no-wait': { type: 'boolean' },
        script: { type: 'string' },
      },
      'Run `logbook cancel --help` for its options.',
    );
    const [runId, ...extra] = parsed.positionals;
    if (!runId || extra.length) throw new LogbookError(ErrorCodes.USAGE, 'Expected exactly one run id.', 'Write `logbook cancel <run-id>`.');
    const v = parsed.values;
    if (v.compensate && v['no-wait'])
      throw new LogbookError(ErrorCodes.USAGE, '--compensate waits for the run to stop, and --no-wait does not.', 'Pass one of them.');
    const db = dbPath(v.journal);
    setStateDir(db);
    const store = openStore(db);
    try {
      if (v.compensate) {
        // Loaded before anything is written: its actions' inverses are what compensation calls, here or in a fallback.
        const row = store.reader.run(runId);
        if (!row) throw runNotFound(runId);
        await loadScript(v.script ?? row.script);
      }
      const report = await cancelRunAndWait(store, runId, {
        ...(v.reason !== undefined ? { reason: v.reason } : {}),
        compensate: v.compensate === true,
        wait: v['no-wait'] !== true,
      });
      const ok = report.status === 'cancelled' || report.status === 'compensated' || report.how === 'requested';
      if (v.json) {
        io.out(JSON.stringify(report, null, 2));
      } else {
        const why = report.reason ? ` (${report.reason})` : '';
        const lines: Record<typeof report.how, string> = {
          'at-once': `cancelled run ${runId}${why}`,
          'at-boundary': `cancelled run ${runId}${why}: it stopped at its next boundary`,
          requested: `asked run ${runId} to stop${why}: its process stops it at its next boundary (\`logbook show ${runId}\` tells when)`,
          'finished-first': `run ${runId} ended ${runStatusWord(report.status)} before it reached a boundary: it was not cancelled`,
        };
        io.out(lines[report.how]);
        for (const ch of report.children ?? [])
          io.out(`  child run ${ch.runId}: ${ch.how === 'at-once' ? 'cancelled with it' : 'asked to stop with it, at its next boundary'}`);
        const c = report.compensation;
        if (!c && report.how !== 'finished-first' && report.how !== 'requested' && report.status !== 'cancelled')
          io.out(`  then its own process compensated it: ${runStatusWord(report.status)}`);
        if (c)
          io.out(
            `  compensation  ${runStatusWord(c.status)}: ${c.compensated.length} inverse(s) applied${c.alreadyCompensated ? `, ${c.alreadyCompensated} already applied earlier` : ''}, ${c.irreversible.length} irreversible`,
          );
      }
      return ok ? EXIT.ok : EXIT.failed;
    } finally {
      store.close();
    }
  },
};
