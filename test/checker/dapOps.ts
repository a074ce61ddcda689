// Schedule operations through the debugger: the built debug adapter and its runner, driven by a real DAP client.

import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import fc from 'fast-check';
import * as path from 'node:path';
import { KILLED_EXIT_CODE } from '../../src/adapter/crashReport';
import { rawInput } from './agent';
import { actionType, type AgentJ, type OpJ } from './spec';
import type { Exec } from './executor';
import type { Operation } from './operations';
import { CHILD_TTL_MS, argsOf, caseFiles, cli, crashAt, crashSpec, env, sleep, type CrashAt } from './processOps';
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

/** How a session is armed and answered. */
interface Drive {
  readonly functionBreakpoints: readonly string[];
  readonly answer: 'continue' | 'next';
  /**
   * Run at stop number `at` (0: the first) before it is answered, while the runner waits there. False: the stop is
   * left unanswered (the session was killed).
   */
  readonly held?: { readonly at: number; readonly run: (dc: DebugClient) => Promise<boolean> };
}

function driveOf(armed: Armed): Drive {
  return { functionBreakpoints: armed === 'defaults' ? [] : ['*'], answer: armed === 'every-step-next' ? 'next' : 'continue' };
}

/** One debug session from launch to `terminated`, every stop answered: how it ended, read as the checker reads a CLI. */
async function session(x: Exec, job: 'run' | 'resume' | 'compensate', crash: string | undefined, drive: Drive): Promise<Ended> {
  const dc = new DebugClient(process.execPath, ADAPTER, 'logbook', { env: env(x), cwd: caseFiles(x).dir }, false);
  dc.defaultTimeout = TIMEOUT_MS;
  const output: string[] = [];
  let exitCode: number | undefined;
  const failures: string[] = [];
  let stops = 0;
  dc.on('output', (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
  dc.on('exited', (e: DebugProtocol.ExitedEvent) => (exitCode = e.body.exitCode));
  dc.on('stopped', (e: DebugProtocol.StoppedEvent) => {
    const threadId = e.body.threadId ?? 1;
    const held = drive.held && stops++ === drive.held.at ? drive.held.run(dc) : Promise.resolve(true);
    const answer = held.then((go) => {
      if (go) return drive.answer === 'next' ? dc.nextRequest({ threadId }) : dc.continueRequest({ threadId });
      return undefined;
    });
    answer.catch((err: Error) => failures.push(`the answer to a stop (${e.body.reason}) failed: ${err.message}`));
  });
  await dc.start();
  try {
    const terminated = dc.waitForEvent('terminated', TIMEOUT_MS);
    const configured = dc.waitForEvent('initialized').then(async () => {
      if (drive.functionBreakpoints.length) await dc.setFunctionBreakpointsRequest({ breakpoints: drive.functionBreakpoints.map((name) => ({ name })) });
      await dc.configurationDoneRequest();
    });
    let refusal: string | undefined;
    await Promise.all([configured, dc.initializeRequest({ adapterID: 'logbook', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' })]);
    await dc.launchRequest(launchConfig(x, job, crash) as DebugProtocol.LaunchRequestArguments).catch((err: Error) => (refusal = err.message));
    await terminated;
    const text = output.join('');
    if (failures.length) return { kind: 'error', message: failures.join('; ') };
    if (exitCode === KILLED_EXIT_CODE) return { kind: 'crashed', where: crash ?? 'by SIGKILL' };
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

/**
 * A second driver while the debugger holds the run stopped before its first call of action 0 (a person reading the
 * Variables view): at once, or after twice the lease's time. The runner is alive and holds the lease, so a second
 * `logbook resume` or `compensate` must be refused and change nothing; then the breakpoint is cleared and the session
 * continued, and the run goes on as if nothing had been tried.
 */
async function heldRace(x: Exec, op: OpJ): Promise<void> {
  const second = String(op.second) as 'resume' | 'compensate';
  const holdMs = Number(op.holdMs);
  const before = x.observer.snapshot(x.runId);
  let tried = false;
  const run = async (dc: DebugClient): Promise<boolean> => {
    tried = true;
    await sleep(holdMs);
    const snap = x.observer.snapshot(x.runId);
    x.after(
      `logbook ${second} (a child process) while the debugger holds the run at its first stop${holdMs ? ` for ${holdMs} ms` : ''}`,
      x.runId,
      cli(x, argsOf(x, second, undefined)),
      snap,
      true,
    );
    await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    return true;
  };
  const ended = await session(x, 'run', undefined, {
    functionBreakpoints: [actionType(x.target.agent.actions[0]!, 0)],
    answer: 'continue',
    held: { at: 0, run },
  });
  x.after(`the debugger's run, held at its first stop${tried ? '' : ' (it never stopped)'}`, x.runId, ended, before);
}

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
    await x.call(label(job, crash, o.armed as Armed), x.runId, () => session(x, job, crash, driveOf(o.armed as Armed)));
  },
});

/**
 * The debugger's Kill, the way a developer kills a run on purpose: stepped through with `next` from a breakpoint on
 * every step and action (each phase of an action's bracket is a stop), the runner killed by a real SIGKILL at stop
 * number `at`, mid-action when that stop is inside one.
 */
function killedAtStop(at: number): Drive {
  return {
    functionBreakpoints: ['*'],
    answer: 'next',
    held: {
      at,
      run: async (dc) => {
        await dc.customRequest('kill');
        return false;
      },
    },
  };
}

export const DEBUGGER_OPERATIONS: Record<string, Operation> = {
  'dap-kill': {
    starts: true,
    processes: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('dap-kill'), at: fc.nat(9) }),
    describe: (o) => `the debugger's run, stepped through with next; the debugger's Kill at stop #${Number(o.at) + 1}`,
    run: async (x, o) => {
      await x.call(`the debugger's run, killed with its Kill at stop #${Number(o.at) + 1}`, x.runId, () =>
        session(x, 'run', undefined, killedAtStop(Number(o.at))),
      );
    },
  },
  'dap-run': debuggerOp('run', 2),
  'dap-race': {
    starts: true,
    processes: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('dap-race'), second: fc.constantFrom('resume', 'compensate'), holdMs: fc.constantFrom(0, 2 * CHILD_TTL_MS) }),
    describe: (o, agent) =>
      `the debugger's run, stopped by a function breakpoint before its first ${actionType(agent.actions[0]!, 0)}${Number(o.holdMs) ? ` and held ${Number(o.holdMs)} ms, past the lease` : ''}; meanwhile logbook ${String(o.second)} in a second process; then continue`,
    run: heldRace,
    compensates: (o) => o.second === 'compensate',
  },
  'dap-resume': debuggerOp('resume', 2),
  'dap-compensate': debuggerOp('compensate', 1),
};
