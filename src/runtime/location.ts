// Finds the user's source line of a run.step / run.do call, or of an integration's entry, from a stack trace.

import { findSourceMap, type SourceMap, type SourceMapping } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SourceLocation } from './hooks';

const runtimeDir = path.dirname(__filename);
/** The package's own code: bundled (`dist/*.js`) or, once source-mapped, its `src/` (the AI integration's frames map
 *  there). Everything else of the package's checkout (its examples, its tests' fixtures) is user code. */
const packageRoot = path.basename(runtimeDir) === 'dist' ? path.dirname(runtimeDir) : path.dirname(path.dirname(runtimeDir));
const OWN_DIRS = [runtimeDir, path.join(packageRoot, 'dist'), path.join(packageRoot, 'src')].map((d) => d + path.sep);
const NODE_MODULES = `${path.sep}node_modules${path.sep}`;
/** Deep enough for an SDK's own frames between the user's call and the integration (the AI SDK has about a dozen). */
const DEPTH = 60;
/** Where run.step's and run.do's caller is: a capture this shallow costs a third of a deep one. */
const NEAR = 8;

/** True for a file of agent-logbook itself or of a package in node_modules: never the line a user wants to see. */
export function isLibraryFile(file: string): boolean {
  return file === __filename || file.includes(NODE_MODULES) || OWN_DIRS.some((d) => file.startsWith(d));
}

/** V8's structured call site (the stack trace API); only what locating a frame needs. */
interface CallSite {
  getFileName(): string | undefined | null;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
}

/**
 * Where a call site is, as a formatted stack would print it: through the file's source map when the module was compiled
 * with one (a script loadScript bundled, a transpiled file), else the generated position. Same arithmetic as Node's
 * own source-mapped stack frames (its prepare_stack_trace.js), so a location reads as it did from the printed stack.
 * Undefined for a frame of no file, and for one of a library file (see isLibraryFile), which is not mapped: its source
 * is the library's too.
 */
function userLocation(site: CallSite): SourceLocation | undefined {
  const name = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!name || line === null || column === null) return undefined;
  const generated = fileOf(name);
  if (!generated.user) return undefined;
  // Node returns {} where no mapping covers the position.
  const entry: Partial<SourceMapping> | undefined = sourceMapOf(generated, name)?.findEntry(line - 1, column - 1);
  if (entry?.originalSource === undefined || entry.originalLine === undefined || entry.originalColumn === undefined)
    return { file: generated.path, line, column };
  const original = fileOf(entry.originalSource);
  return original.user ? { file: original.path, line: entry.originalLine + 1, column: entry.originalColumn + 1 } : undefined;
}

/**
 * A file as a stack or a source map names it: its path, whether a frame in it can be the user's line, and (looked up
 * the first time a frame of it is mapped) its source map as findSourceMap gives it, null for none.
 */
interface NamedFile {
  readonly path: string;
  readonly user: boolean;
  map?: SourceMap | null;
}

/**
 * By name, once: every step and action of a debugger's run names the same few files, and converting a `file://` URL,
 * testing the library folders and finding the map (which converts the path to a URL again) for each frame cost more
 * than the rest of locating it. A module compiled again under the same name has a new map: loadScript says so
 * (sourceMapsChanged), and everything kept is dropped.
 */
const namedFiles = new Map<string, NamedFile>();

/** Called when a module was compiled (again) with a source map: locations look the maps up afresh. */
export function sourceMapsChanged(): void {
  namedFiles.clear();
}

function fileOf(name: string): NamedFile {
  let known = namedFiles.get(name);
  if (!known) {
    const p = filePath(name);
    known = { path: p, user: path.isAbsolute(p) && !isLibraryFile(p) };
    namedFiles.set(name, known);
  }
  return known;
}

function sourceMapOf(file: NamedFile, name: string): SourceMap | undefined {
  if (file.map === undefined) {
    try {
      file.map = findSourceMap(name) ?? null;
    } catch {
      file.map = null;
    }
  }
  return file.map ?? undefined;
}

function filePath(name: string): string {
  if (!name.startsWith('file://')) return name;
  try {
    return fileURLToPath(name);
  } catch {
    return name;
  }
}

/**
 * The first frame of the user's own code below `below`. The stack is taken as V8's call sites, not as text: only the
 * user's frames are mapped, where a printed stack maps and formats every frame (about 100 µs with source maps on, for
 * each step and action of a debugger's run); and first only the nearest frames, where run.step's and run.do's caller
 * is, then, if none is the user's (an SDK's frames between, for an integration), deep enough for those.
 */
function firstUserFrame(below: (...args: never[]) => unknown): SourceLocation | undefined {
  const near = callSites(below, NEAR);
  for (const site of near) {
    const loc = userLocation(site);
    if (loc) return loc;
  }
  if (near.length < NEAR) return undefined;
  for (const site of callSites(below, DEPTH).slice(NEAR)) {
    const loc = userLocation(site);
    if (loc) return loc;
  }
  return undefined;
}

function callSites(below: (...args: never[]) => unknown, depth: number): readonly CallSite[] {
  const holder: { stack?: unknown } = {};
  const limit = Error.stackTraceLimit;
  // Whatever the process installed (source-map-support, say) is set back at once: only this capture sees the sites.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be put back, never called here
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = depth;
  Error.prepareStackTrace = (_err, sites) => sites;
  try {
    Error.captureStackTrace(holder, below);
    const sites = holder.stack;
    return Array.isArray(sites) ? (sites as CallSite[]) : [];
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
}

/**
 * The user's line of a run.step / run.do call. `entry` is the run object's method the script called: the one frame
 * just below it is, nearly always, the user's call itself, and a capture of one frame costs about half of the nearest
 * eight's (V8 builds each frame it keeps). When that frame is not the user's (a library's helper made the call) or
 * `entry` is not on the stack (the runtime called itself), the first user frame below the runtime's own is looked for.
 */
export function callerLocation(entry?: (...args: never[]) => unknown): SourceLocation | undefined {
  if (entry !== undefined) {
    const [site] = callSites(entry, 1);
    const loc = site && userLocation(site);
    if (loc) return loc;
  }
  return firstUserFrame(callerLocation);
}

/**
 * For integrations: the line of the agent's own code that is running now — the first frame of the stack (async
 * frames included) outside agent-logbook and outside node_modules (the SDK's own code). Call it where the user's code
 * enters the integration and pass it to `run.do(action, args, { at })`, so the debugger shows that line, not the
 * integration's. Undefined when no such frame is on the stack (the SDK called in from a detached task), and in a
 * process where no driver shows locations (a CLI run, a worker: nothing would read it).
 */
export function callSite(): SourceLocation | undefined {
  // A stack capture costs a few µs and a source-map lookup per frame walked; only a process whose driver shows
  // locations pays it.
  return locationsWanted ? firstUserFrame(callSite) : undefined;
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
