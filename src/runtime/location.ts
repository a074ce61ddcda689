// Finds the user's source line of a run.step / run.do call, or of an integration's entry, from a stack trace.

import * as path from 'node:path';
import type { SourceLocation } from './hooks';

const runtimeDir = path.dirname(__filename);
/** The package's own code: bundled (`dist/*.js`) or, once source-mapped, its `src/` (the AI integration's frames map
 *  there). Everything else of the package's checkout (its examples, its tests' fixtures) is user code. */
const packageRoot = path.basename(runtimeDir) === 'dist' ? path.dirname(runtimeDir) : path.dirname(path.dirname(runtimeDir));
const OWN_DIRS = [runtimeDir, path.join(packageRoot, 'dist'), path.join(packageRoot, 'src')].map((d) => d + path.sep);
const NODE_MODULES = `${path.sep}node_modules${path.sep}`;
// A path right after `at ` or `(`: never the tail of `node:internal/…`, which is no file of the user's.
const FRAME = /(?:^|[\s(])((?:file:\/\/)?\/[^():]+|[A-Za-z]:\\[^():]+):(\d+):(\d+)\)?$/;
/** Deep enough for an SDK's own frames between the user's call and the integration (the AI SDK has about a dozen). */
const DEPTH = 60;

/** True for a file of agent-logbook itself or of a package in node_modules: never the line a user wants to see. */
export function isLibraryFile(file: string): boolean {
  return file === __filename || file.includes(NODE_MODULES) || OWN_DIRS.some((d) => file.startsWith(d));
}

function firstUserFrame(stack: string | undefined): SourceLocation | undefined {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m?.[1]) continue;
    const file = m[1].startsWith('file://') ? new URL(m[1]).pathname : m[1];
    if (isLibraryFile(file)) continue;
    return { file, line: Number(m[2]), column: Number(m[3]) };
  }
  return undefined;
}

function stackFrom(below: (...args: never[]) => unknown): string | undefined {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = DEPTH;
  Error.captureStackTrace(holder, below);
  Error.stackTraceLimit = limit;
  return holder.stack;
}

export function callerLocation(): SourceLocation | undefined {
  return firstUserFrame(stackFrom(callerLocation));
}

/**
 * For integrations: the line of the agent's own code that is running now — the first frame of the stack (async
 * frames included) outside agent-logbook and outside node_modules (the SDK's own code). Call it where the user's code
 * enters the integration and pass it to `run.do(action, args, { at })`, so the debugger shows that line, not the
 * integration's. Undefined when no such frame is on the stack (the SDK called in from a detached task), and in a
 * process where no driver shows locations (a CLI run, a worker: nothing would read it).
 */
export function callSite(): SourceLocation | undefined {
  // A stack capture costs about 100 µs with source maps on; only a process whose driver shows locations pays it.
  return locationsWanted ? firstUserFrame(stackFrom(callSite)) : undefined;
}

/** Set once a session that shows source locations (the debugger's runner) exists in this process; never unset. */
let locationsWanted = false;

/** Called by a session that captures locations, so that integrations' callSite() answers from then on. */
export function wantLocations(): void {
  locationsWanted = true;
}

/** A location given by an integration, checked: only a plain file, line and column reach the debugger. */
export function validSite(v: unknown): SourceLocation | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const { file, line, column } = v as Record<string, unknown>;
  if (typeof file !== 'string' || !path.isAbsolute(file) || !Number.isInteger(line) || (line as number) < 1) return undefined;
  return { file, line: line as number, column: Number.isInteger(column) && (column as number) >= 1 ? (column as number) : 1 };
}
