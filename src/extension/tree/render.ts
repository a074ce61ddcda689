// How each node looks: label, description, status icon and colour, Markdown tooltip, and the contextValue menus key on.
// The words are the policy's (the CLI and the debugger print the same); icons and colours are the tree's own.

import * as vscode from 'vscode';
import type { ActionDisplay, AiCallDto, RunDisplay, StepDisplay } from '../../reader/readerProtocol';
import { ACTION_WORDS, RUN_WORDS, executionsText } from '../../reader/readerProtocol';
import { ago, durationWords, untilWords } from '../../shared/relativeTime';
import { COMMANDS, FLAG, ITEM, contextValue, type Flag } from '../ids';
import type { ActionNode, DetailNode, MoreNode, Node, PauseInfo, RunNode, StepNode } from './nodes';

const icon = (id: string, color?: string): vscode.ThemeIcon => new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);

export const RUN_LOOK: Record<RunDisplay, { word: string; icon: string; color: string }> = {
  queued: { word: RUN_WORDS['queued'].word, icon: 'watch', color: 'descriptionForeground' },
  running: { word: RUN_WORDS['running'].word, icon: 'sync~spin', color: 'charts.blue' },
  completed: { word: RUN_WORDS['completed'].word, icon: 'pass-filled', color: 'testing.iconPassed' },
  failed: { word: RUN_WORDS['failed'].word, icon: 'error', color: 'testing.iconFailed' },
  'needs-decision': { word: RUN_WORDS['needs-decision'].word, icon: 'question', color: 'charts.yellow' },
  'awaiting-approval': { word: RUN_WORDS['awaiting-approval'].word, icon: 'shield', color: 'charts.yellow' },
  compensating: { word: RUN_WORDS['compensating'].word, icon: 'history', color: 'charts.purple' },
  compensated: { word: RUN_WORDS['compensated'].word, icon: 'discard', color: 'charts.purple' },
  'compensation-failed': { word: RUN_WORDS['compensation-failed'].word, icon: 'error', color: 'testing.iconFailed' },
  interrupted: { word: RUN_WORDS['interrupted'].word, icon: 'debug-disconnect', color: 'charts.orange' },
  cancelled: { word: RUN_WORDS['cancelled'].word, icon: 'circle-slash', color: 'testing.iconFailed' },
  sleeping: { word: RUN_WORDS['sleeping'].word, icon: 'clock', color: 'descriptionForeground' },
  waiting: { word: RUN_WORDS['waiting'].word, icon: 'mail', color: 'charts.yellow' },
};

export const STEP_LOOK: Record<StepDisplay, { word: string; icon: string; color: string }> = {
  completed: { word: 'completed', icon: 'check', color: 'testing.iconPassed' },
  replayed: { word: 'replayed', icon: 'debug-rerun', color: 'descriptionForeground' },
  'in-progress': { word: 'in progress', icon: 'loading~spin', color: 'charts.blue' },
  interrupted: { word: 'interrupted', icon: 'debug-disconnect', color: 'charts.orange' },
  failed: { word: 'failed', icon: 'error', color: 'testing.iconFailed' },
};

export const ACTION_LOOK: Record<ActionDisplay, { word: string; icon: string; color: string }> = {
  'in-flight': { word: ACTION_WORDS['in-flight'].word, icon: 'loading~spin', color: 'charts.blue' },
  'in-doubt': { word: ACTION_WORDS['in-doubt'].word, icon: 'warning', color: 'charts.yellow' },
  'in-doubt-after-error': { word: ACTION_WORDS['in-doubt-after-error'].word, icon: 'warning', color: 'charts.yellow' },
  committed: { word: ACTION_WORDS['committed'].word, icon: 'pass', color: 'testing.iconPassed' },
  failed: { word: ACTION_WORDS['failed'].word, icon: 'error', color: 'testing.iconFailed' },
  'awaiting-approval': { word: ACTION_WORDS['awaiting-approval'].word, icon: 'shield', color: 'charts.yellow' },
  rejected: { word: ACTION_WORDS['rejected'].word, icon: 'circle-slash', color: 'testing.iconFailed' },
  compensated: { word: ACTION_WORDS['compensated'].word, icon: 'discard', color: 'charts.purple' },
  compensating: { word: ACTION_WORDS['compensating'].word, icon: 'history', color: 'charts.purple' },
  irreversible: { word: ACTION_WORDS['irreversible'].word, icon: 'lock', color: 'testing.iconFailed' },
  'compensation-failed': { word: ACTION_WORDS['compensation-failed'].word, icon: 'error', color: 'testing.iconFailed' },
};

const EFFECT_BADGE = { 'read-only': 'read-only', idempotent: 'idempotent', 'non-idempotent': '⚠ non-idempotent' } as const;

const code = (s: string, n = 600): string => '```json\n' + (s.length > n ? `${s.slice(0, n)}…` : s).replace(/```/g, '`\u200b``') + '\n```';

export function runFlags(n: RunNode): Flag[] {
  const r = n.run;
  const flags: Flag[] = [FLAG.checkpoint];
  if (r.leaseLive) flags.push(FLAG.live);
  else {
    if (r.canDelete) flags.push(FLAG.deletable);
    if (r.canResume) flags.push(FLAG.resumable);
    if (r.canCompensate) flags.push(FLAG.compensable);
  }
  if (r.canCancel) flags.push(FLAG.cancellable);
  if (r.inDoubt > 0) flags.push(FLAG.inDoubt);
  if (r.awaitingApproval > 0) flags.push(FLAG.awaitingApproval);
  if (r.status === 'waiting') flags.push(FLAG.waiting);
  return flags;
}

/** How a run held at a debugger stop looks: the journal says running, the session says where it waits. */
export const PAUSED_LOOK = { word: 'paused', icon: 'debug-pause', color: 'debugIcon.pauseForeground' } as const;

export function pausedLook(p: PauseInfo): { word: string; icon: string; color: string } {
  return { ...PAUSED_LOOK, word: `paused at ${p.where}` };
}

/** The word and icon of a run, with a debug session's pause laid over what the journal says, and a sleep's wake time. */
export function runLook(n: RunNode): { word: string; icon: string; color: string } {
  if (n.paused) return pausedLook(n.paused);
  const look = RUN_LOOK[n.run.status];
  const wake = n.run.wakeAt;
  if (wake === null) return look;
  // Released (`sleeping`), or waiting in its process (`running`): either way, until when.
  const until = `sleeping until ${untilWords(wake)}`;
  return n.run.status === 'sleeping' ? { ...look, word: until } : { ...RUN_LOOK.sleeping, word: `${look.word} · ${until}` };
}

function runItem(n: RunNode): vscode.TreeItem {
  const r = n.run;
  const look = runLook(n);
  const item = new vscode.TreeItem(r.agent, r.stepCount > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  const extra = [r.inDoubt ? `${r.inDoubt} in doubt` : '', r.awaitingApproval ? `${r.awaitingApproval} awaiting approval` : ''].filter(Boolean);
  const origin = r.forkedFrom ? `fork of ${r.forkedFrom}${r.forkedAtStep !== null ? ` at step ${r.forkedAtStep + 1}` : ''}` : '';
  item.description = [look.word, ...extra, `${r.attempt} attempt${r.attempt === 1 ? '' : 's'}`, ago(r.createdAt), origin, r.id].filter(Boolean).join(' · ');
  item.iconPath = icon(look.icon, look.color);
  item.contextValue = contextValue(ITEM.run, runFlags(n));
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`$(${look.icon}) **${r.agent}** — ${look.word}\n\n`);
  md.appendMarkdown(
    `| | |\n|---|---|\n| run | \`${r.id}\` |\n| attempts | ${r.attempt} |\n| steps | ${r.stepCount} |\n| actions | ${r.actionCount}${r.inDoubt ? ` (${r.inDoubt} in doubt)` : ''} |\n| started | ${new Date(r.createdAt).toLocaleString()} |\n| updated | ${new Date(r.updatedAt).toLocaleString()} |\n`,
  );
  if (r.owner) md.appendMarkdown(`| held by | ${r.owner} |\n`);
  if (r.forkedFrom) md.appendMarkdown(`| forked from | \`${r.forkedFrom}\`${r.forkedAtStep !== null ? ` at step ${r.forkedAtStep + 1}` : ''} |\n`);
  if (r.parentId) md.appendMarkdown(`| started by | \`${r.parentId}\`, step ${(r.parentStep ?? 0) + 1} (run.child) |\n`);
  md.appendMarkdown(`\n\nscript: \`${r.script}\`\n\n`);
  if (r.input) md.appendMarkdown(`input:\n${code(r.input)}\n\n`);
  if (r.output) md.appendMarkdown(`output:\n${code(r.output)}\n\n`);
  if (r.error) md.appendMarkdown(`error: ${r.error}\n\n`);
  if (r.status === 'interrupted') md.appendMarkdown('_The process driving this run is gone (killed or crashed). Resume reconciles what was in doubt._');
  if (r.status === 'needs-decision') md.appendMarkdown('_An action without `verify` is in doubt: decide whether it happened (right-click the action)._');
  if (r.cancel)
    md.appendMarkdown(
      `_${r.status === 'cancelled' ? 'Cancelled' : 'Asked to cancel'} by ${quote(r.cancel.by)}${r.cancel.reason ? `: ${quote(r.cancel.reason)}` : ''}._${r.status === 'cancelled' ? ' It is never resumed; compensate it to undo what it did.' : ''}\n\n`,
    );
  if (r.wakeAt !== null)
    md.appendMarkdown(
      r.status === 'sleeping'
        ? `_Asleep until ${new Date(r.wakeAt).toISOString()}: no process holds it; a worker wakes it when it is due (or \`logbook resume ${r.id}\`, \`--now\` to wake it at once)._`
        : `_Waiting in its process until ${new Date(r.wakeAt).toISOString()}._`,
    );
  if (r.waitingFor) {
    const until = r.waitingFor.until === null ? '' : ` until ${new Date(r.waitingFor.until).toLocaleString()}`;
    const kid = r.waitingFor.runId === undefined ? '' : ` in its child run \`${r.waitingFor.runId}\``;
    md.appendMarkdown(`_Waits for event \`${r.waitingFor.event}\`${kid}${until}: "Send Event…" delivers it and continues the run._`);
  }
  item.tooltip = md;
  item.id = n.key;
  return item;
}

/** A run.sleep's step: a clock, and until when (the wake time journaled when it started). */
function sleepItem(n: StepNode, wakeAt: number): vscode.TreeItem {
  const s = n.step;
  const item = new vscode.TreeItem(`${s.idx + 1}. ${s.name}`, vscode.TreeItemCollapsibleState.None);
  const due = wakeAt <= Date.now();
  const run = n.parent.run;
  const over = due || run.status === 'completed' || s.status === 'replayed';
  item.description = `sleep ${s.sleepMs !== null ? durationWords(s.sleepMs) : ''} · ${over ? `woke ${new Date(wakeAt).toISOString().slice(0, 19).replace('T', ' ')} UTC` : `until ${untilWords(wakeAt)}`}`;
  item.iconPath = icon(over ? 'clock' : 'watch', over ? 'descriptionForeground' : 'charts.blue');
  item.contextValue = contextValue(ITEM.step, [FLAG.hasSource, FLAG.checkpoint]);
  const md = new vscode.MarkdownString(
    `**sleep ${s.idx + 1}: ${s.name}** — ${over ? 'over' : 'sleeping'}\n\nwakes at ${new Date(wakeAt).toISOString()}${s.sleepMs !== null ? ` (slept ${durationWords(s.sleepMs)} from ${new Date(wakeAt - s.sleepMs).toISOString()})` : ''}\n\n_The wake time was journaled when the sleep started: a resumed run waits only what is left._`,
  );
  item.tooltip = md;
  item.id = n.key;
  return item;
}

function stepItem(n: StepNode): vscode.TreeItem {
  const s = n.step;
  if (s.wakeAt !== null) return sleepItem(n, s.wakeAt);
  const look = STEP_LOOK[s.status];
  const item = new vscode.TreeItem(
    `${s.idx + 1}. ${s.name}`,
    s.actionCount + s.childCount > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  item.description = [
    look.word,
    s.childCount ? `${s.childCount} child run${s.childCount === 1 ? '' : 's'}` : '',
    s.actionCount ? `${s.actionCount} action${s.actionCount === 1 ? '' : 's'}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  item.iconPath = icon(look.icon, look.color);
  const flags: Flag[] = [FLAG.hasSource];
  if (s.hasResult) flags.push(FLAG.checkpoint);
  item.contextValue = contextValue(ITEM.step, flags);
  const md = new vscode.MarkdownString(
    `**step ${s.idx + 1}: ${s.name}** — ${look.word}\n\nattempt ${s.attempt}, started ${new Date(s.startedAt).toLocaleTimeString()}${s.endedAt !== null ? `, took ${s.endedAt - s.startedAt} ms` : ''}`,
  );
  if (s.status === 'replayed') md.appendMarkdown('\n\n_Completed in an earlier attempt: on resume its checkpointed result was returned without running it._');
  if (s.error) md.appendMarkdown(`\n\nerror: ${s.error}`);
  item.tooltip = md;
  item.id = n.key;
  return item;
}

function actionItem(n: ActionNode): vscode.TreeItem {
  const a = n.action;
  const look = ACTION_LOOK[a.status];
  const item = new vscode.TreeItem(a.type, vscode.TreeItemCollapsibleState.Collapsed);
  const recon = a.reconciliation ? ` · ${a.reconciliation}` : a.decision ? ` · decided ${a.decision}` : '';
  const took = a.endedAt !== null ? ` · ${a.endedAt - a.startedAt} ms` : '';
  item.description = `${look.word} · ${EFFECT_BADGE[a.effect]}${recon} · ${executionsText({ status: a.journalStatus, executions: a.executions })}×${a.ai ? ` · ${a.ai.line}${took}` : ''}`;
  item.iconPath = icon(look.icon, look.color);
  const flags: Flag[] = [FLAG.hasKey, FLAG.hasSource];
  if (a.status === 'in-doubt' || a.status === 'in-doubt-after-error') flags.push(FLAG.inDoubt);
  if (a.journalStatus === 'awaiting-approval' && a.approval === 'pending') flags.push(FLAG.awaitingApproval);
  if (a.ai) flags.push(FLAG.aiCall);
  if (a.ai?.kind === 'model' && a.journalStatus === 'committed') flags.push(FLAG.whatIf);
  item.contextValue = contextValue(ITEM.action, flags);
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`$(${look.icon}) **${a.type}** v${a.version} — ${look.word}\n\n`);
  if (a.ai) md.appendMarkdown(aiCallMarkdown(a.ai, took));
  md.appendMarkdown(
    `effect: **${a.effect}** · executions: ${executionsText({ status: a.journalStatus, executions: a.executions })}${a.reconciliation ? ` · reconciled: ${a.reconciliation}` : ''}\n\n`,
  );
  md.appendMarkdown(`idempotency key: \`${a.id}\`\n\nargs:\n${code(a.args)}\n\n`);
  if (a.result) md.appendMarkdown(`result:\n${code(a.result)}\n\n`);
  if (a.error) md.appendMarkdown(`error: ${a.error}\n\n`);
  if (a.status === 'in-doubt-after-error') {
    md.appendMarkdown('_Execute threw an error that does not prove nothing happened: resume reconciles it like a crash in flight (verify, or your decision)._');
  }
  if (a.status === 'in-doubt') {
    md.appendMarkdown(
      a.effect === 'non-idempotent'
        ? '_Started but never committed: the process died in between. Resume verifies it, or asks you to decide whether it happened._'
        : '_Started but never committed: resume runs it again with the same idempotency key._',
    );
  }
  item.tooltip = md;
  item.id = n.key;
  return item;
}

const quote = (s: string): string => s.replace(/[\\`*_{}[\]<>#|]/g, (c) => `\\${c}`);

/** A model or tool call at a glance in the tooltip; the whole record opens with Open Model or Tool Call in Full. */
function aiCallMarkdown(ai: AiCallDto, took: string): string {
  if (ai.kind === 'tool')
    return `tool **${quote(ai.name)}**${took}\n\ninput:\n${code(ai.input ?? '')}\n\n${ai.output !== null ? `result:\n${code(ai.output)}\n\n` : ''}`;
  const lines = [
    `model **${quote(ai.name)}**${ai.tokens ? ` · ${ai.tokens.input} tokens in, ${ai.tokens.output} out` : ''}${took}${ai.finishReason ? ` · ${quote(ai.finishReason)}` : ''}`,
    '',
  ];
  if (ai.lastMessages.length) lines.push('last messages:', '', ...ai.lastMessages.map((m) => `- ${quote(m)}`), '');
  if (ai.text) lines.push(`answer: ${quote(ai.text)}`, '');
  if (ai.toolCalls.length) lines.push('tool calls:', '', ...ai.toolCalls.map((t) => `- \`${t.replace(/`/g, "'")}\``), '');
  return `${lines.join('\n')}\n`;
}

function detailItem(n: DetailNode): vscode.TreeItem {
  const oneLine = n.value.replace(/\s+/g, ' ');
  const item = new vscode.TreeItem(n.name, vscode.TreeItemCollapsibleState.None);
  item.description = oneLine.length > 200 ? `${oneLine.slice(0, 199)}…` : oneLine;
  item.tooltip = new vscode.MarkdownString(`**${n.name}**\n\n${code(n.value, 4000)}`);
  item.contextValue = contextValue(ITEM.detail, n.name === 'idempotency key' ? [FLAG.hasKey] : []);
  item.id = n.key;
  return item;
}

function moreItem(n: MoreNode): vscode.TreeItem {
  const what = n.owner === undefined ? 'runs' : n.owner.kind === 'run' ? 'steps' : 'actions';
  const item = new vscode.TreeItem(`Load more ${what}…`, vscode.TreeItemCollapsibleState.None);
  item.description = `${n.remaining} more`;
  item.iconPath = icon('ellipsis');
  item.contextValue = contextValue(ITEM.loadMore, []);
  item.command = { command: COMMANDS.loadMore.id, title: COMMANDS.loadMore.title, arguments: [n] };
  item.id = n.key;
  return item;
}

export function treeItem(n: Node): vscode.TreeItem {
  switch (n.kind) {
    case 'run':
      return runItem(n);
    case 'step':
      return stepItem(n);
    case 'action':
      return actionItem(n);
    case 'detail':
      return detailItem(n);
    case 'more':
      return moreItem(n);
    case 'message': {
      const item = new vscode.TreeItem(n.text, vscode.TreeItemCollapsibleState.None);
      item.iconPath = icon('warning', 'charts.yellow');
      item.tooltip = n.tooltip;
      item.contextValue = contextValue(ITEM.message, []);
      item.command = { command: COMMANDS.showLog.id, title: COMMANDS.showLog.title };
      return item;
    }
  }
}
