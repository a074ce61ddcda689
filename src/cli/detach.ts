// `logbook run --detach`: records a run as queued (input checked, script version noted) for a `logbook worker` to start.

import type { LoadedScript } from '../loader/loadScript';
import { EXIT } from '../runtime/errors';
import { parseRawInput } from '../runtime/input';
import type { Store } from '../runtime/store';
import type { Io } from './journalOption';
import { callerContextFromEnv } from '../runtime/trace/env';

export async function detachRun(store: Store, script: LoadedScript, rawInput: unknown, runId: string, io: Io, json: boolean): Promise<number> {
  const input = await parseRawInput(script.agent, runId, rawInput, (line) => io.err(line));
  const traceContext = callerContextFromEnv(process.env);
  store.enqueueRun({
    id: runId,
    agent: script.agent.name,
    script: script.path,
    scriptVersion: script.version,
    input: input.json,
    ...(traceContext ? { traceContext } : {}),
  });
  if (json) io.out(JSON.stringify({ runId, status: 'queued', agent: script.agent.name, scriptVersion: script.version }));
  else {
    io.out(runId);
    io.err(
      `queued ${runId} (${script.agent.name}, script version ${script.version.slice(0, 8)}): a \`logbook worker\` with this script starts it; \`logbook ls\` shows who holds it.`,
    );
  }
  return EXIT.ok;
}
