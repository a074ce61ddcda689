// `logbook traces <run-id>`: a journaled run (finished or not) as OpenTelemetry spans, sent to an OTLP/HTTP endpoint or written as OTLP JSON.

import * as fs from 'node:fs';
import { ErrorCodes, EXIT, LogbookError } from '../runtime/errors';
import { openStore } from '../runtime/store';
import { loadExporter } from '../runtime/trace/load';
import { dbPath } from './journalOption';
import { parseCommandArgs } from './commandArgs';
import type { CommandModule } from './journalOption';

const USAGE = 'logbook traces <run-id> [--endpoint URL] [--protocol http/protobuf|http/json] [--file OUT.json] [--json]';

export const tracesCommand: CommandModule = {
  name: 'traces',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseCommandArgs(
      args,
      {
        journal: { type: 'string' },
        endpoint: { type: 'string' },
        protocol: { type: 'string' },
        file: { type: 'string' },
        json: { type: 'boolean' },
      },
      'Run `logbook --help` for the commands and their options.',
    );
    const [runId, ...extra] = parsed.positionals;
    if (!runId || extra.length) throw new LogbookError(ErrorCodes.USAGE, 'Expected exactly one run id.', 'Write `logbook traces <run-id>`.');
    const { endpoint, protocol, file } = parsed.values;
    if (protocol !== undefined && protocol !== 'http/json' && protocol !== 'http/protobuf')
      throw new LogbookError(ErrorCodes.USAGE, `--protocol ${protocol} is not one Logbook sends.`, 'Use --protocol http/protobuf or --protocol http/json.');
    const { otlpJson, runSpans, sendSpans, shownUrl, traceConfig } = loadExporter();
    let unsupported = false;
    const cfg = traceConfig(process.env, { ...(endpoint ? { endpoint } : {}), ...(protocol ? { protocol } : {}) }, (l) => {
      unsupported ||= l.includes('is not supported');
      io.err(l);
    });
    // An endpoint is set, but the protocol variable names one Logbook does not send: say that, not "nowhere to send".
    if (!cfg && !file && unsupported)
      throw new LogbookError(
        ErrorCodes.USAGE,
        'The environment asks for an OTLP protocol Logbook does not send (the line above names it).',
        `Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, or write \`logbook traces ${runId} --protocol http/protobuf\`.`,
      );
    if (!cfg && !file)
      throw new LogbookError(
        ErrorCodes.USAGE,
        'There is nowhere to send the traces: no --endpoint, no OTEL_EXPORTER_OTLP_ENDPOINT, and no --file.',
        `Write \`logbook traces ${runId} --endpoint http://localhost:4318/v1/traces\`, or \`--file ${runId}.otlp.json\`.`,
      );
    const store = openStore(dbPath(parsed.values.journal), { readonly: true });
    let mapped;
    try {
      mapped = runSpans(store, runId, { captureContent: cfg?.captureContent ?? false });
    } finally {
      store.close();
    }
    if (!mapped) throw new LogbookError(ErrorCodes.RUN_NOT_FOUND, `There is no run ${runId} in this journal.`, 'List the runs with `logbook ls`.', { runId });
    const { spans } = mapped;
    const serviceName = cfg?.serviceName ?? traceConfig({ ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://unused' })?.serviceName ?? 'agent-logbook';
    if (file) fs.writeFileSync(file, `${JSON.stringify(otlpJson(spans, { serviceName }), null, 2)}\n`);
    if (cfg) {
      try {
        await sendSpans(spans, cfg);
      } catch (err) {
        throw new LogbookError(
          ErrorCodes.TRACE_EXPORT,
          `The traces of run ${runId} were not sent: ${(err as Error).message}.`,
          'Check that the collector listens there (OTLP/HTTP, usually port 4318), then run the command again: the spans keep their ids.',
          { runId },
        );
      }
    }
    const traceId = spans[0]?.traceId ?? '';
    if (parsed.values.json)
      io.out(JSON.stringify({ runId, traceId, spans: spans.length, ...(cfg ? { sentTo: shownUrl(cfg.url) } : {}), ...(file ? { file } : {}) }));
    else io.out(`run ${runId}: trace ${traceId}, ${spans.length} spans${cfg ? ` sent to ${shownUrl(cfg.url)}` : ''}${file ? ` written to ${file}` : ''}`);
    return EXIT.ok;
  },
};
