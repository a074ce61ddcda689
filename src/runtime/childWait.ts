// What a parent records as waited for (runs.waiting_for) while its child run waits for an event: the child, under the
// reserved `logbook:` prefix (wait.ts), so nothing sent to the parent is taken for the child's wait and a worker claims
// the parent once the child moves (store/queue.ts). No imports: the store reads it too.

/** The prefix of a parent's waiting_for that names its child run. */
export const CHILD_WAIT_PREFIX = 'logbook:child:';

export function childWaitName(childRunId: string): string {
  return `${CHILD_WAIT_PREFIX}${childRunId}`;
}

/** The child run a parent's waiting_for names, or undefined for an event of its own. */
export function childOfWait(waitingFor: string | null | undefined): string | undefined {
  return waitingFor?.startsWith(CHILD_WAIT_PREFIX) ? waitingFor.slice(CHILD_WAIT_PREFIX.length) : undefined;
}
