// Finds the user's source line of a run.step / run.do call from a stack trace (source-mapped when enabled).

import * as path from 'node:path';
import type { SourceLocation } from './hooks';

const runtimeDir = path.dirname(__filename);
const FRAME = /\(?((?:file:\/\/)?\/[^():]+|[A-Za-z]:\\[^():]+):(\d+):(\d+)\)?$/;

export function callerLocation(): SourceLocation | undefined {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 30;
  Error.captureStackTrace(holder, callerLocation);
  Error.stackTraceLimit = limit;
  for (const line of (holder.stack ?? '').split('\n').slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m?.[1]) continue;
    const file = m[1].startsWith('file://') ? new URL(m[1]).pathname : m[1];
    if (file.startsWith(runtimeDir + path.sep) || file === __filename || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    return { file, line: Number(m[2]), column: Number(m[3]) };
  }
  return undefined;
}
