// `logbook ls` and `logbook show`: the journal as tables for people and as JSON for machines.

import { runFacts } from '../runtime/runFacts';
import type { Store } from '../runtime/store';
import type { ActionRow, InboxRow, RunRow, StepRow } from '../runtime/store/rows';
import { runNotFound, type LogbookError } from '../runtime/errors';
import { actionPlace, displayJournalJson, type JournalPlace } from '../runtime/json';
import { ago } from '../shared/relativeTime';
import { actionStatusWord, clip, clipChars, paint, printable, runStatusWord, table } from './format';
import { actionDisplay, executionsText, runAllows } from '../runtime/policy';
import { journaledError } from '../runtime/settle';

/**
 * The damaged values met while showing a journal: each is shown as null and listed, so a journal with one damaged row
 * is still shown (and the command then exits with LB_JOURNAL_INVALID's code).
 */
export type Damage = LogbookError[];

function shown(text: string | null, place: () => JournalPlace, damage: Damage, none: unknown = undefined): unknown {
  if (text === null) return none;
  const d = displayJournalJson(text, place);
  if (d.ok) return d.value;
  damage.push(d.error);
  return null;
}

/** What `show --json` lists for each damaged value: its code, where it is, and the message with the remedy. */
export function damageJson(damage: Damage): Array<Record<string, unknown>> {
  return damage.map((e) => ({ code: e.code, ...e.details, message: e.message }));
}

export function runJson(store: Store, row: RunRow, damage: Damage = []): Record<string, unknown> {
  const f = runFacts(store, row);
  damage.push(...f.damaged.map((d) => d.error));
  // A damaged value is null in --json (an absent one is left out): the `damaged` list says why.
  const shownValue = (column: 'input' | 'output', v: unknown): unknown => (f.damaged.some((d) => d.column === column) ? null : v);
  return {
    id: f.id,
    agent: f.agent,
    status: f.status,
    storedStatus: f.storedStatus,
    attempt: f.attempt,
    script: f.script,
    input: shownValue('input', f.input),
    output: shownValue('output', f.output),
    error: f.error,
    createdAt: new Date(f.createdAt).toISOString(),
    updatedAt: new Date(f.updatedAt).toISOString(),
    owner: f.owner,
    leaseEpoch: f.leaseEpoch,
    scriptVersion: f.scriptVersion,
    waiting: store.waitingReason(row, f.leaseLive) ?? null,
    ...(row.status === 'sleeping' && row.wake_at != null ? { wakeAt: new Date(row.wake_at).toISOString() } : {}),
    ...(row.status === 'waiting' && row.waiting_for != null
      ? { waitingFor: { event: row.waiting_for, until: row.wake_at == null ? null : new Date(row.wake_at).toISOString() } }
      : {}),
    forkedFrom: f.forkedFrom,
    // run.child: the run and step that started this one, and the runs it started (left out when it has none).
    parent: row.parent_id ? { runId: row.parent_id, step: (row.parent_step ?? 0) + 1 } : null,
    ...childrenJson(store, row.id),
    ...(f.cancel ? { cancel: { reason: f.cancel.reason, compensate: f.cancel.compensate, by: f.cancel.by, at: new Date(f.cancel.at).toISOString() } } : {}),
  };
}

function childrenJson(store: Store, runId: string): { children?: Array<Record<string, unknown>> } {
  const kids = store.reader.children(runId);
  if (kids.length === 0) return {};
  return { children: kids.map((c) => ({ runId: c.id, agent: c.agent, step: (c.parent_step ?? 0) + 1, status: store.reader.view(c).effectiveStatus })) };
}

/** A page of runs with each child right after its parent (when both are on the page), and how deep it sits. */
function nested(rows: readonly RunRow[]): Array<{ row: RunRow; depth: number }> {
  const onPage = new Set(rows.map((r) => r.id));
  const kids = new Map<string, RunRow[]>();
  for (const r of rows) if (r.parent_id && onPage.has(r.parent_id)) kids.set(r.parent_id, [...(kids.get(r.parent_id) ?? []), r]);
  const out: Array<{ row: RunRow; depth: number }> = [];
  const add = (r: RunRow, depth: number): void => {
    out.push({ row: r, depth });
    for (const k of (kids.get(r.id) ?? []).sort((a, b) => (a.parent_step ?? 0) - (b.parent_step ?? 0))) add(k, depth + 1);
  };
  for (const r of rows) if (!(r.parent_id && onPage.has(r.parent_id))) add(r, 0);
  return out;
}

export function stepJson(s: StepRow, damage: Damage = []): Record<string, unknown> {
  const at = (column: 'result' | 'error') => (): JournalPlace => ({ runId: s.run_id, table: 'steps', idx: s.idx, name: s.name, column });
  return {
    index: s.idx,
    name: s.name,
    status: s.status,
    attempt: s.attempt,
    result: shown(s.result, at('result'), damage),
    error: shown(s.error, at('error'), damage, null),
  };
}

export function actionJson(a: ActionRow, leaseLive: boolean, damage: Damage = []): Record<string, unknown> {
  return {
    id: a.id,
    idempotencyKey: a.id,
    type: a.type,
    version: a.version,
    effect: a.effect,
    step: a.step_idx,
    status: a.status,
    /** The policy's display status: what the sidebar shows for it. */
    display: actionDisplay(a, leaseLive),
    inDoubt: a.status === 'started' && (!leaseLive || a.error !== null),
    afterError: a.status === 'started' && a.error !== null,
    args: shown(a.args, () => actionPlace(a, 'args'), damage),
    result: shown(a.result, () => actionPlace(a, 'result'), damage),
    error: shown(a.error, () => actionPlace(a, 'error'), damage, null),
    executions: a.executions,
    reconciliation: a.reconciliation,
    decision: a.decision,
    approval: a.approval,
    compensation: a.compensation,
    compensationExecutions: a.compensation_executions,
    attempt: a.attempt,
  };
}

/** An event sent to the run, as `show --json` lists it: `delivered` to the wait at `step`, `refused` by its schema, or `pending`. */
export function inboxJson(e: InboxRow, runEnded: boolean, damage: Damage = []): Record<string, unknown> {
  const at = (column: 'data' | 'error') => (): JournalPlace => ({ runId: e.run_id, table: 'inbox', seq: e.seq, name: e.name, column });
  return {
    seq: e.seq,
    name: e.name,
    id: e.id,
    status: e.status,
    /** A pending event of a run that ended was never delivered: the run did not wait for it again. */
    ...(e.status === 'pending' && runEnded ? { neverDelivered: true } : {}),
    data: shown(e.data, at('data'), damage, null),
    sentAt: new Date(e.sent_at).toISOString(),
    sentBy: e.sent_by,
    step: e.step_idx,
    attempt: e.attempt,
    takenAt: e.taken_at === null ? null : new Date(e.taken_at).toISOString(),
    error: shown(e.error, at('error'), damage, null),
  };
}

export function listRuns(store: Store, json: boolean, limit: number, damage: Damage = []): string {
  const rows = store.reader.runs(limit);
  if (json)
    return JSON.stringify(
      rows.map((r) => runJson(store, r, damage)),
      null,
      2,
    );
  if (rows.length === 0) return 'No runs yet. Start one with `logbook run <script>`.';
  return table(
    ['RUN', 'AGENT', 'STATUS', 'ATTEMPTS', 'STEPS', 'ACTIONS', 'STARTED', 'HELD BY / WAITS'],
    nested(rows).map(({ row: r, depth }) => {
      const v = store.reader.view(r);
      // Who drives it (a worker's name, host and pid), or why no worker has taken it yet.
      const stopping = v.leaseLive && r.cancel_requested && r.status === 'running' ? ', cancel asked: stops at its next boundary' : '';
      const holder = v.leaseLive ? `${r.lease_owner ?? '?'} (epoch ${r.lease_epoch})${stopping}` : (store.waitingReason(r, false) ?? '');
      // A child run sits under its parent (run.child); one whose parent is off the page says whose child it is.
      const id = depth > 0 ? `${'  '.repeat(depth - 1)}└ ${r.id}` : r.id;
      const whose = depth === 0 && r.parent_id ? ` (child of ${r.parent_id})` : '';
      return [
        `${id}${whose}`,
        r.agent,
        runStatusWord(v.effectiveStatus),
        String(r.attempt),
        String(store.reader.stepCount(r.id)),
        String(store.reader.actionCount(r.id)),
        ago(r.created_at),
        holder,
      ];
    }),
  );
}

/** `logbook show`: the run as a table or JSON; damaged values are shown as such and collected in `damage`. */
export function showRun(store: Store, runId: string, json: boolean, damage: Damage = []): string {
  const row = store.reader.run(runId);
  if (!row) throw runNotFound(runId);
  const v = store.reader.view(row);
  const steps = store.reader.steps(runId, 0, Number.MAX_SAFE_INTEGER);
  const actions = [...store.reader.allActions(runId)];
  const inbox = store.reader.inbox.ofRun(runId, 0, 10_000);
  const ended = !runAllows(row.status, v.leaseLive, v.compensationStopped).canSend;
  if (json) {
    const shownRun = {
      run: runJson(store, row, damage),
      steps: steps.map((st) => stepJson(st, damage)),
      actions: actions.map((a) => actionJson(a, v.leaseLive, damage)),
      inbox: inbox.map((e) => inboxJson(e, ended, damage)),
    };
    return JSON.stringify(damage.length ? { ...shownRun, damaged: damageJson(damage) } : shownRun, null, 2);
  }
  // Each value is checked as JSON does; the table shows the text as it is.
  runJson(store, row, damage);
  for (const st of steps) stepJson(st, damage);
  for (const a of actions) actionJson(a, v.leaseLive, damage);
  for (const e of inbox) inboxJson(e, ended, damage);
  const lines: string[] = [];
  lines.push(`${paint('bold', row.id)}  ${row.agent}  ${runStatusWord(v.effectiveStatus)}  attempt ${row.attempt}`);
  lines.push(`  script  ${row.script}`);
  lines.push(`  input   ${clip(row.input ?? 'null', 100)}`);
  if (row.forked_from !== null) lines.push(`  fork of ${row.forked_from}${row.forked_at_step !== null ? ` at step #${row.forked_at_step + 1}` : ''}`);
  if (row.output !== null) lines.push(`  output  ${clip(row.output, 100)}`);
  if (row.error) lines.push(`  error   ${clip(journaledError(row.error).message, 200)}`);
  if (v.leaseLive) lines.push(`  held by ${row.lease_owner ?? '?'}`);
  if (row.parent_id) lines.push(`  parent  ${row.parent_id} (run.child at its step #${(row.parent_step ?? 0) + 1}): resuming the parent resumes this run too`);
  if (row.status === 'sleeping') lines.push(`  ${store.waitingReason(row, false) ?? 'sleeping'}: no process holds it`);
  if (row.status === 'waiting') {
    const leaf = store.waitingLeaf(row);
    const send = leaf ? `\`logbook send ${leaf.runId} ${leaf.event} --data JSON\` continues it` : `\`logbook resume ${row.id}\` goes on`;
    lines.push(`  ${store.waitingReason(row, false) ?? 'waiting'}: no process holds it; ${send}`);
  }
  const cancel = runFacts(store, row).cancel;
  if (cancel) {
    const why = cancel.reason ? `: ${cancel.reason}` : '';
    const state =
      row.status === 'cancelled' ? 'cancelled' : v.leaseLive ? 'cancel asked; it stops at its next boundary' : `cancel asked, then it ended ${row.status}`;
    lines.push(`  cancel  ${state}${why} (by ${cancel.by}${cancel.compensate ? ', with compensation' : ''})`);
  }
  lines.push('');
  const stepName = new Map(steps.map((s) => [s.idx, s.name]));
  lines.push(
    table(
      ['#', 'STEP', 'STATUS'],
      steps.map((s) => [
        String(s.idx + 1),
        clipChars(printable(s.name), 50),
        s.status === 'completed'
          ? paint('green', 'completed')
          : s.status === 'failed'
            ? paint('red', 'failed')
            : paint('yellow', v.leaseLive ? 'in progress' : 'interrupted'),
      ]),
    ),
  );
  const kids = store.reader.children(runId);
  if (kids.length > 0) {
    lines.push('');
    lines.push(
      table(
        ['CHILD RUN', 'AGENT', 'STATUS', 'STEP'],
        kids.map((c) => [
          c.id,
          c.agent,
          runStatusWord(store.reader.view(c).effectiveStatus),
          clipChars(printable(stepName.get(c.parent_step ?? -1) ?? ''), 30),
        ]),
      ),
    );
  }
  if (actions.length > 0) {
    lines.push('');
    lines.push(
      table(
        ['ACTION', 'TYPE', 'EFFECT', 'STATUS', 'EXEC', 'RECONCILED', 'STEP'],
        actions.map((a) => [
          // Never clipped, and escaped: two distinct keys must not print alike.
          printable(a.id),
          printable(a.type),
          a.effect,
          actionStatusWord(a, v.leaseLive),
          executionsText(a),
          a.reconciliation ?? (a.decision ? `decided ${a.decision}` : ''),
          clipChars(printable(stepName.get(a.step_idx) ?? String(a.step_idx + 1)), 30),
        ]),
      ),
    );
  }
  if (inbox.length > 0) {
    lines.push('');
    lines.push(
      table(
        ['EVENT', 'ID', 'SENT', 'BY', 'STATUS'],
        inbox.map((e) => [
          clipChars(printable(e.name), 40),
          printable(e.id),
          ago(e.sent_at),
          clipChars(printable(e.sent_by), 30),
          e.status === 'delivered'
            ? paint('green', `delivered to step #${(e.step_idx ?? 0) + 1}`)
            : e.status === 'refused'
              ? paint('red', `refused by the wait's schema at step #${(e.step_idx ?? 0) + 1}: ${clip(refusal(e.error), 80)}`)
              : ended
                ? paint('yellow', 'never delivered: the run ended before it waited for it')
                : row.status === 'waiting' && row.waiting_for === e.name
                  ? paint('yellow', 'pending: the run waits for it (`logbook resume` takes it)')
                  : 'pending: kept until the run waits for it',
        ]),
      ),
    );
  }
  const doubt = actions.filter((a) => a.status === 'started' && (!v.leaseLive || a.error !== null));
  for (const a of doubt.filter((x) => x.error !== null)) {
    lines.push(paint('yellow', `  ${a.type} ${a.id} is in doubt after an error: ${errorText(a.error)} (an error is not proof that nothing happened)`));
  }
  if (doubt.length > 0) {
    lines.push('');
    lines.push(
      paint(
        'yellow',
        `${doubt.length} action(s) in doubt: \`logbook resume ${runId}\` reconciles them${doubt.some((a) => a.decision === null) ? ' (add --decide <action-id>=happened|not-happened for those without verify)' : ''}.`,
      ),
    );
  }
  for (const e of damage) lines.push(paint('red', `  damaged ${e.message}`));
  return lines.join('\n');
}

function refusal(text: string | null): string {
  try {
    const m = (JSON.parse(text ?? '{}') as { message?: unknown }).message;
    return typeof m === 'string' ? m : (text ?? '');
  } catch {
    return text ?? '';
  }
}

function errorText(text: string | null): string {
  const e = journaledError(text);
  return `${e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}`;
}
