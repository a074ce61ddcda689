// Runner-side error wording: a Node that cannot load better-sqlite3, and anything thrown, as text for the session.

import { ErrorCodes, LogbookError, describe } from '../runtime/errors';

/** A Node that cannot load better-sqlite3's native module: say which Node and how to fix it. */
export function wrongNode(err: unknown): LogbookError | undefined {
  const text = err instanceof Error ? err.message : String(err);
  if (!/NODE_MODULE_VERSION|better_sqlite3\.node|bindings file|invalid ELF|wrong ELF|Cannot find module 'better-sqlite3'|dlopen/i.test(text)) return undefined;
  return new LogbookError(
    ErrorCodes.WRONG_NODE,
    `The runner's Node (${process.version}, ABI ${process.versions.modules}, ${process.execPath}) cannot load better-sqlite3: ${describe(err).replace(/\s*\n\s*/g, ' ')}.`,
    'Set "runtimeExecutable" in the launch configuration to the Node that installed the project\'s dependencies (better-sqlite3 is built for one Node ABI), or rebuild it for this one with `npm rebuild better-sqlite3`.',
  );
}

/** Describes anything thrown, including errors from the evaluation sandbox's realm (not instanceof Error here). */
export function thrownText(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (e && typeof e === 'object' && typeof e.message === 'string') return `${typeof e.name === 'string' ? e.name : 'Error'}: ${e.message}`;
  return describe(err);
}

export function errorFields(err: unknown): { code?: string; message: string } {
  if (err instanceof LogbookError) return { code: err.code, message: err.message };
  return { message: err instanceof Error ? `${err.name}: ${err.message}` : describe(err) };
}
