// Schedule operations through the debugger: the built debug adapter and its runner, driven by a real DAP client.

import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import fc from 'fast-check';
import * as path from 'node:path';
import { rawInput } from './agent';
import type { AgentJ, OpJ } from './spec';
import type { Exec } from './executor';
import type { Operation } from './operations';
import { caseFiles, crashAt, crashSpec, env, type CrashAt } from './processOps';
import type { Ended } from './surfaces';

const ADAPTER = path.resolve(__dirname, '..', '..', 'dist', 'debugAdapter.js');
const TIMEOUT_MS = 120_000;

/**
 * How the session is driven: nothing armed but the default filters, answering each stop with continue; or a function
 * breakpoint on every step and action, answering each stop with continue or with next (stepping through the whole
 * run). Either way every stop is answered at once, so the run goes where it would go from the CLI.
 */
type Armed = 'defaults' | 'every-step-continue' | 'every-step-next';
const ARMED: readonly Armed[] = ['defaults', 'every-step-continue', 'every-step-next'];

function launchConfig(x: Exec, job: 'run' | 'resume' | 'compensate', crash: string | undefined): Record<string, unknown> {
  const base = { program: x.target.script, journal: x.target.db, cwd: caseFiles(x).dir, ...(crash ? { crashAt: crash } : {}) };
  if (job === 'run') return { ...base, input: rawInput(x.target.agent.fields), runId: x.runId };
  if (job === 'resume') return { ...base, resume: x.runId };
  return { ...base, compensate: x.runId };
}

/** One debug session from launch to `terminated`, every stop answered: how it ended, read as the checker reads a CLI. */
async function session(x: Exec, job: 'run' | 'resume' | 'compensate', crash: string | undefined, armed: Armed): Promise<Ended> {
  const dc = new DebugClient(process.execPath, ADAPTER, 'logbook', { env: env(x), cwd: caseFiles(x).dir }, false);
  dc.defaultTimeout = TIMEOUT_MS;
  const output: string[] = [];
  let exitCode: number | undefined;
  const failures: string[] = [];
  dc.on('output', (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
  dc.on('exited', (e: DebugProtocol.ExitedEvent) => (exitCode = e.body.exitCode));
  dc.on('stopped', (e: DebugProtocol.StoppedEvent) => {
    const threadId = e.body.threadId ?? 1;
    const answer = armed === 'every-step-next' ? dc.nextRequest({ threadId }) : dc.continueRequest({ threadId });
    answer.catch((err: Error) => failures.push(`the answer to a stop (${e.body.reason}) failed: ${err.message}`));
  });
  await dc.start();
  try {
    const terminated = dc.waitForEvent('terminated', TIMEOUT_MS);
    const configured = dc.waitForEvent('initialized').then(async () => {
      if (armed !== 'defaults') await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: '*' }] });
      await dc.configurationDoneRequest();
    });
    let refusal: string | undefined;
    await Promise.all([configured, dc.initializeRequest({ adapterID: 'logbook', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' })]);
    await dc.launchRequest(launchConfig(x, job, crash) as DebugProtocol.LaunchRequestArguments).catch((err: Error) => (refusal = err.message));
    await terminated;
    const text = output.join('');
    if (failures.length) return { kind: 'error', message: failures.join('; ') };
    if (exitCode === KILLED) return { kind: 'crashed', where: crash ?? 'by SIGKILL' };
    if (refusal !== undefined) {
      const code = /\[(LB_[A-Z_]+)\]/.exec(refusal)?.[1];
      return code ? { kind: 'refused', code, message: refusal } : { kind: 'error', message: `the launch failed: ${refusal}` };
    }
    const status = x.observer.run(x.runId)?.status;
    return status ? { kind: 'outcome', status } : { kind: 'error', message: `the session ended (exit ${String(exitCode)}) with no run: ${text.slice(-400)}` };
  } finally {
    await dc.stop().catch(() => undefined);
  }
}

/** The adapter's exit code for a runner killed by SIGKILL (src/adapter/crashReport.ts). */
const KILLED = 137;

function label(job: string, crash: string | undefined, armed: Armed): string {
  const how =
    armed === 'defaults'
      ? 'no breakpoints'
      : armed === 'every-step-next'
        ? 'a breakpoint on every step, stepped through with next'
        : 'a breakpoint on every step';
  return `the debugger's ${job} (${how})${crash ? ` with crashAt ${crash}` : ''}`;
}

const debuggerOp = (job: 'run' | 'resume' | 'compensate', weight: number): Operation => ({
  starts: job === 'run',
  processes: true,
  weight,
  arbitrary: () =>
    fc.record({ crash: crashAt, armed: fc.constantFrom(...ARMED) }).map(({ crash, armed }) => ({ op: `dap-${job}`, armed, ...(crash ? { crash } : {}) })),
  describe: (o: OpJ, agent: AgentJ) => label(job, o.crash ? crashSpec(agent, o.crash as CrashAt) : undefined, o.armed as Armed),
  ...(job === 'compensate' ? { compensates: () => true } : {}),
  run: async (x, o) => {
    const crash = o.crash ? crashSpec(x.target.agent, o.crash as CrashAt) : undefined;
    await x.call(label(job, crash, o.armed as Armed), x.runId, () => session(x, job, crash, o.armed as Armed));
  },
});

export const DEBUGGER_OPERATIONS: Record<string, Operation> = {
  'dap-run': debuggerOp('run', 2),
  'dap-resume': debuggerOp('resume', 2),
  'dap-compensate': debuggerOp('compensate', 1),
};
