// The runner process the adapter spawns on the user's Node: speaks framed JSON on fd 3, drives the run in RunnerHost.

import * as net from 'node:net';
import { ErrorCodes } from '../runtime/errors';
import { Channel } from '../link/channel';
import { FromRunner, ToRunner } from '../link/runnerProtocol';
import type { RunnerHost } from './host';

const GRACE_MS = 3000;

function main(): void {
  let host: RunnerHost | undefined;
  const early: ToRunner[] = [];
  let exiting = false;
  const stream = new net.Socket({ fd: 3, readable: true, writable: true });
  const channel: Channel<ToRunner, FromRunner> = new Channel(
    stream,
    ToRunner,
    (m) => (host ? host.onMessage(m) : early.push(m)),
    (err) => process.stderr.write(`logbook runner: ${err.message}\n`),
    () => {
      // The adapter is gone: stop the run at its next boundary (its lease is released), then leave.
      if (exiting) return;
      if (host?.running) {
        host.requestStop();
        setTimeout(() => process.exit(1), GRACE_MS).unref();
      } else process.exit(1);
    },
  );
  const done = (code: number): void => {
    exiting = true;
    // The run's traces are being sent in the background (only when OTEL_* asks): given a moment before the exit.
    const traces = import('../runtime/trace/pending.js').then(
      (t) => Promise.race([t.flushTraces(), new Promise<void>((r) => setTimeout(r, GRACE_MS).unref())]),
      () => undefined,
    );
    void traces
      .then(() => channel.flush())
      .then(() => {
        channel.end();
        process.exit(code);
      });
  };
  channel.send({ type: 'ready', pid: process.pid, node: process.version, abi: process.versions.modules, execPath: process.execPath });
  // Loaded lazily so that a Node unable to load the runtime's dependencies still reports why over the channel.
  import('./host.js').then(
    (mod) => {
      host = new mod.RunnerHost((m) => channel.send(m), done);
      for (const m of early.splice(0)) host.onMessage(m);
    },
    (err: unknown) => {
      channel.send({
        type: 'failed',
        code: ErrorCodes.WRONG_NODE,
        message: `The runner could not load the Logbook runtime on ${process.execPath} (${process.version}): ${err instanceof Error ? err.message : String(err)}. Set "runtimeExecutable" to the Node that installed the project's dependencies.`,
      });
      done(2);
    },
  );
}

main();
