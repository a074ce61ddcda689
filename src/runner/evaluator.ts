// Evaluates debugger expressions (conditions, Debug Console, hovers, watches) against a paused context, sandboxed.

import * as vm from 'node:vm';

const TIMEOUT_MS = 1000;

export class Evaluator {
  private readonly context = vm.createContext(Object.create(null) as object);
  private readonly scripts = new Map<string, vm.Script>();
  private names: string[] = [];

  private compile(expression: string): vm.Script {
    let s = this.scripts.get(expression);
    if (s) return s;
    try {
      // As an expression first, so `{a: 1}` is an object and not a block.
      s = new vm.Script(`(${expression}\n)`, { filename: 'logbook-eval' });
    } catch {
      s = new vm.Script(expression, { filename: 'logbook-eval' });
    }
    if (this.scripts.size > 500) this.scripts.clear();
    this.scripts.set(expression, s);
    return s;
  }

  /** Throws a SyntaxError when the expression does not compile. */
  check(expression: string): void {
    this.compile(expression);
  }

  evaluate(expression: string, scope: Record<string, unknown>): unknown {
    const script = this.compile(expression);
    const ctx = this.context as Record<string, unknown>;
    for (const n of this.names) delete ctx[n];
    this.names = Object.keys(scope);
    Object.assign(ctx, scope);
    return script.runInContext(this.context, { timeout: TIMEOUT_MS, displayErrors: false });
  }
}

/** A deep copy for the sandbox, so an expression cannot change the args an effect is about to receive. */
export function sandboxCopy(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return JSON.parse(JSON.stringify(value ?? null)) as unknown;
  }
}
