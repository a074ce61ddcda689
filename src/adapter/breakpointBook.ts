// The session's breakpoints: which requested ones are verified (and why not), and the armed set sent to the runner.

import * as fs from 'node:fs';
import * as vm from 'node:vm';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { describe } from '../runtime/errors';
import { DEFAULT_FILTERS } from '../link/filters';
import { parseHitCondition } from '../link/hitCondition';
import { EXCEPTION_FILTERS, type Breakpoints, type ExceptionFilter, type FunctionBreakpoint, type LineBreakpoint } from '../link/runnerProtocol';
import { breakableLines } from '../link/sourceScan';

type Requested = { condition?: string | undefined; hitCondition?: string | undefined };

/** Why an expression or hit condition cannot be used, or undefined when it can. */
export function conditionProblem(b: Requested): string | undefined {
  if (b.condition) {
    try {
      new vm.Script(`(${b.condition}\n)`);
    } catch (err) {
      return `The condition does not compile: ${describe(err)}.`;
    }
  }
  if (b.hitCondition && !parseHitCondition(b.hitCondition))
    return `The hit condition ${JSON.stringify(b.hitCondition)} is not understood: use a count (31), or >=N, >N, <N, <=N, ==N, %N.`;
  return undefined;
}

function extras(b: Requested): { condition?: string; hitCondition?: string } {
  return { ...(b.condition ? { condition: b.condition } : {}), ...(b.hitCondition ? { hitCondition: b.hitCondition } : {}) };
}

/** The lines of a file where a breakpoint can stop, or why the file cannot be read. */
export function readBreakable(file: string): { lines: Map<number, string>; problem?: string } {
  try {
    return { lines: breakableLines(fs.readFileSync(file, 'utf8')) };
  } catch (err) {
    return { lines: new Map(), problem: `Cannot read ${file}: ${describe(err)}.` };
  }
}

export class BreakpointBook {
  private readonly lines = new Map<string, LineBreakpoint[]>();
  private functions: FunctionBreakpoint[] = [];
  private filters: ExceptionFilter[] = [...DEFAULT_FILTERS];
  private nextId = 1;

  all(): Breakpoints {
    return { lines: [...this.lines.values()].flat(), functions: this.functions, filters: this.filters };
  }

  /** Replaces a file's line breakpoints; `line` values are the debugger's (1-based) lines. */
  setLines(file: string | undefined, requested: Array<Requested & { line: number; clientLine: number }>): DebugProtocol.Breakpoint[] {
    const { lines, problem: unreadable } = file
      ? readBreakable(file)
      : { lines: new Map<number, string>(), problem: 'Logbook sets breakpoints only in files on disk.' };
    const armed: LineBreakpoint[] = [];
    const results = requested.map((b): DebugProtocol.Breakpoint => {
      const line = b.clientLine;
      if (unreadable) return { verified: false, line, message: unreadable, reason: 'failed' };
      if (!lines.has(b.line)) {
        return {
          verified: false,
          line,
          message:
            'No run.step(...), run.do(...) or run.sleep(...) call on this line (nor a LangGraph .addNode(...) or logbookDo(...)): Logbook stops before steps and actions start, and where a sleep waits.',
          reason: 'failed',
        };
      }
      const problem = conditionProblem(b);
      if (problem) return { verified: false, line, message: problem, reason: 'failed' };
      const id = this.nextId++;
      armed.push({ id, file: file ?? '', line: b.line, ...extras(b) });
      return { id, verified: true, line };
    });
    if (file) this.lines.set(file, armed);
    return results;
  }

  setFunctions(requested: DebugProtocol.FunctionBreakpoint[]): DebugProtocol.Breakpoint[] {
    const armed: FunctionBreakpoint[] = [];
    const results = requested.map((b): DebugProtocol.Breakpoint => {
      const name = b.name.trim();
      if (!name)
        return {
          verified: false,
          message: 'Name a step, an action type (e.g. email.send) or an action id (model:* for model calls); * matches any text.',
          reason: 'failed',
        };
      const problem = conditionProblem(b);
      if (problem) return { verified: false, message: problem, reason: 'failed' };
      const id = this.nextId++;
      armed.push({ id, name, ...extras(b) });
      return { id, verified: true };
    });
    this.functions = armed;
    return results;
  }

  setFilters(ids: string[]): DebugProtocol.Breakpoint[] {
    this.filters = EXCEPTION_FILTERS.filter((f) => ids.includes(f));
    return ids.map((id) => ({ verified: (EXCEPTION_FILTERS as readonly string[]).includes(id) }));
  }
}
