// Example host: an HTTP server that starts, lists, resumes and compensates runs through the programmatic API, and at
// boot resumes every run a previous process of it left interrupted. Run it: npx tsx examples/api-server.ts

import * as http from 'node:http';
import { randomUUID } from 'node:crypto';
import { LogbookError, openJournal, type AnyAgent } from 'agent-logbook';
import emailCampaign from './email-campaign';
import orderFulfilment from './order-fulfilment';

const agents: Record<string, AnyAgent> = { [emailCampaign.name]: emailCampaign, [orderFulfilment.name]: orderFulfilment };
const journal = openJournal({ journal: process.env.LOGBOOK_JOURNAL ?? '.logbook/journal.db', agents: Object.values(agents), role: 'api-server' });

/** Runs this process is driving; a shutdown waits for them so none is left half-written on purpose. */
const driving = new Set<Promise<unknown>>();
function drive(p: Promise<unknown>): void {
  const tracked = p.catch((err: unknown) => console.error(`[api-server] ${err instanceof Error ? err.message : String(err)}`)).finally(() => driving.delete(tracked));
  driving.add(tracked);
}

async function body(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(value)}\n`);
}

/** LB_ codes are stable, so a host can map them to HTTP statuses. */
function statusOf(err: unknown): number {
  if (!(err instanceof LogbookError)) return 500;
  if (err.code === 'LB_RUN_NOT_FOUND' || err.code === 'LB_ACTION_NOT_FOUND') return 404;
  if (err.code === 'LB_LEASE_HELD' || err.code === 'LB_RUN_EXISTS' || err.code === 'LB_RUN_NOT_RESUMABLE') return 409;
  return 400;
}

// POST /runs {agent, input, runId?, wait?}   GET /runs   GET /runs/:id   POST /runs/:id/resume|compensate {wait?}
async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const [, collection, runId, verb] = (req.url ?? '/').split('?')[0]!.split('/');
  if (collection !== 'runs') return send(res, 404, { error: 'try /runs' });
  if (req.method === 'GET' && !runId) return send(res, 200, journal.runs({ limit: 50 }));
  if (req.method === 'GET' && runId) {
    const run = journal.run(runId);
    return run ? send(res, 200, run) : send(res, 404, { error: `no run ${runId}` });
  }
  if (req.method !== 'POST') return send(res, 405, { error: 'GET or POST' });
  const b = await body(req);
  // One driver per run: a run another request (or the boot recovery) drives is refused with LB_LEASE_HELD (409).
  // The 202 waits for onDriving, so a refusal is answered as one instead of being accepted and logged.
  let driving: () => void = () => undefined;
  const leased = new Promise<void>((resolve) => (driving = resolve));
  const onDriving = (): void => driving();
  let work: Promise<unknown>;
  let id: string;
  if (!runId) {
    const agent = agents[String(b.agent)];
    if (!agent) return send(res, 400, { error: `unknown agent ${String(b.agent)}; known: ${Object.keys(agents).join(', ')}` });
    id = typeof b.runId === 'string' ? b.runId : `run-${randomUUID()}`;
    work = journal.start(agent, b.input ?? {}, { runId: id, onDriving });
  } else if (verb === 'resume') {
    id = runId;
    work = journal.resume(runId, { onDriving });
  } else if (verb === 'compensate') {
    id = runId;
    work = journal.compensate(runId, { onDriving });
  } else return send(res, 404, { error: 'POST /runs, /runs/:id/resume or /runs/:id/compensate' });
  if (b.wait === true) return send(res, 200, await work);
  await Promise.race([leased, work]);
  drive(work);
  send(res, 202, { runId: id });
}

const server = http.createServer((req, res) => {
  route(req, res).catch((err: unknown) => send(res, statusOf(err), { error: err instanceof Error ? err.message : String(err), code: err instanceof LogbookError ? err.code : undefined }));
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  console.log(`[api-server] listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : '?'}`);
  // Runs the last process of this server was driving when it died: resume them (or finish their compensation).
  const left = journal.interrupted();
  if (left.length) console.log(`[api-server] resuming ${left.length} interrupted run(s): ${left.map((r) => r.id).join(', ')}`);
  drive(
    journal.recoverInterrupted().then((done) => {
      for (const d of done) console.log(`[api-server] ${d.runId}: ${d.action === 'failed' ? `could not recover: ${d.error.message}` : d.action === 'resumed' ? d.outcome.status : d.report.status}`);
    }),
  );
});

process.on('SIGTERM', () => {
  server.close();
  void Promise.all(driving).finally(() => {
    journal.close();
    process.exit(0);
  });
});
