// A command module's arguments: node:util's parseArgs (strict), with a parse error turned into LB_USAGE and its remedy.

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `args` against `options` (unknown flags and missing values refused). A parse error becomes LB_USAGE with
 * node's own words for what was wrong and `remedy` for what to do, so every command refuses bad flags alike.
 * `allowPositionals: false` refuses any argument that is not a flag (`logbook worker`).
 */
export function parseCommandArgs<const O extends Options>(
  args: string[],
  options: O,
  remedy: string,
  allowPositionals = true,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new LogbookError(ErrorCodes.USAGE, describe(err), remedy);
  }
}
