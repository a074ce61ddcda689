// The trace sends this process has in flight, so a host (or the debugger's runner) can wait for them before it exits.

const pending = new Set<Promise<void>>();

export function trackSend(p: Promise<void>): void {
  pending.add(p);
  void p.finally(() => pending.delete(p));
}

/** Waits for the trace sends this process started (they never reject): call it before a host exits. */
export async function flushTraces(): Promise<void> {
  await Promise.all([...pending]);
}
