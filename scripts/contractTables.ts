// The two generated tables of docs/contract.md, from the policy and the error table: what resume promises per effect
// class, and what each error code does to a run. `npm run docs:contract` writes them; a test fails when they drift.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterExecuteError, reconcilePlan, type ReconcileHow } from '../src/runtime/policy';
import { EXIT, ErrorCodes, exitCodeOf, isScriptBugCode, isStorageCode } from '../src/runtime/errors';
import type { Effect } from '../src/runtime/define';

export const CONTRACT_DOC = path.join(__dirname, '..', 'docs', 'contract.md');

const HOW: Record<ReconcileHow, { resume: string; settle: string }> = {
  'run-again': { resume: 'runs again', settle: 'runs again' },
  'nothing-to-undo': { resume: 'nothing to undo', settle: 'nothing to undo' },
  verify: {
    resume: '`verify`: found → committed with what it found, not executed; not found → executed with the same key',
    settle: '`verify`: found → compensated like any committed action; not found → marked not happened',
  },
  're-execute-with-key': { resume: 'executed again with the same key', settle: 'executed again with the same key, then compensated' },
  'no-inverse': {
    resume: 'executed again with the same key',
    settle: 'not executed again (it would only make certain an effect nothing can undo): marked irreversible, its outcome unknown',
  },
  'needs-decision': {
    resume: 'the run stops `needs-decision` (exit 3) until a person decides `happened` (with its result) or `not-happened`',
    settle: 'the compensation stops `needs-decision` (exit 3) until a person decides',
  },
  'decided-happened': { resume: 'committed with the decided result', settle: 'compensated' },
  'decided-not-happened': { resume: 'executed', settle: 'marked not happened' },
  unknown: { resume: 'refused until the script loads', settle: 'refused until the script loads' },
};

const BEFORE: Record<Effect, string> = {
  'read-only': 'nothing: its result is written behind, with the next transaction',
  idempotent: "`started`, a lazy commit (no fsync); or with its result, declared `started: 'with-result'`",
  'non-idempotent': '`started`, durable (`synchronous=FULL`, fsync) before `execute` is called',
};

const AFTER_ERROR: Record<'failed' | 'in-doubt', string> = {
  failed: 'failed (run again on resume)',
  'in-doubt': 'in doubt, reconciled on resume as in the next column',
};

/** The table of effect classes: one row per effect and whether it has a verify. */
export function effectTable(): string {
  const rows: string[] = [
    '| action | durable before `execute` | `execute` throws | in doubt on resume | in doubt when compensating |',
    '|---|---|---|---|---|',
  ];
  for (const effect of ['read-only', 'idempotent', 'non-idempotent'] as const) {
    for (const hasVerify of effect === 'read-only' ? [false] : [true, false]) {
      const resume = reconcilePlan({ effect, hasVerify, decision: null }, 'resume').how;
      const withInverse = reconcilePlan({ effect, hasVerify, decision: null, hasInverse: true }, 'compensate').how;
      const withoutInverse = reconcilePlan({ effect, hasVerify, decision: null, hasInverse: false }, 'compensate').how;
      const settle =
        withInverse === withoutInverse ? HOW[withInverse].settle : `with \`compensate\`: ${HOW[withInverse].settle}; without: ${HOW[withoutInverse].settle}`;
      const thrown = afterExecuteError(effect, undefined);
      const definite = afterExecuteError(effect, 'not-happened');
      const onError = thrown === definite ? AFTER_ERROR[thrown] : `${AFTER_ERROR[thrown]}; an error classified \`not-happened\`: ${AFTER_ERROR[definite]}`;
      const name = effect === 'read-only' ? '`read-only`' : `\`${effect}\`, ${hasVerify ? 'with' : 'no'} \`verify\``;
      rows.push(`| ${name} | ${BEFORE[effect]} | ${onError} | ${HOW[resume].resume} | ${settle} |`);
    }
  }
  return rows.join('\n');
}

/** The table of error kinds: every code, grouped by what it does to a run. */
export function errorTable(): string {
  const codes = Object.values(ErrorCodes) as string[];
  // The errors a script meets as values: thrown into it (a rejected approval) or by it (an action's own failure), or
  // the end of a compensation whose inverse threw. Not refusals: they are outcomes of the run.
  const outcomes: string[] = [
    ErrorCodes.APPROVAL_REJECTED,
    ErrorCodes.ACTION_FAILED,
    ErrorCodes.COMPENSATE_FAILED,
    ErrorCodes.RUN_CANCELLED,
    ErrorCodes.CHILD_FAILED,
  ];
  const groups: Array<{ kind: string; does: string; codes: string[] }> = [
    {
      kind: 'the journal or its storage failed (exit 5)',
      does: "never the script's failure: nothing more is written, no declared policy (`onFailure`) fires, the run stays resumable once the storage is fixed",
      codes: codes.filter((c) => isStorageCode(c)),
    },
    {
      kind: 'another process holds the run (exit 4)',
      does: 'nothing is written; try again when the holder ends (a lease lost mid-run ends the attempt before any new effect starts)',
      codes: codes.filter((c) => exitCodeOf(c as never) === EXIT.busy),
    },
    {
      kind: 'the script or its definitions are wrong',
      does: 'the run fails, and is never compensated automatically: fix the script, then resume',
      codes: codes.filter((c) => isScriptBugCode(c)),
    },
    {
      kind: "the run's own outcome",
      does: "an error the script sees or throws (`ApprovalRejectedError` at a rejected gate, `ActionFailedError` from an `execute`): the script's failure unless it catches it, so `onFailure` applies; an inverse that threw ends the compensation `compensation-failed` (compensate again once fixed); the cancel code is ctx.signal's reason once `logbook cancel` reached the run, which stops at its next boundary, `cancelled`, whatever the script threw; `ChildRunFailedError` is run.child's when the child failed, was cancelled or compensated",
      codes: outcomes,
    },
    {
      kind: 'a refused command (exit 2)',
      does: 'refused before anything is journaled: a refused command changes nothing',
      codes: codes.filter((c) => !outcomes.includes(c) && !isStorageCode(c) && !isScriptBugCode(c) && exitCodeOf(c as never) === EXIT.usage),
    },
  ];
  const rows = ['| kind | what happens to the run | codes |', '|---|---|---|'];
  for (const g of groups) rows.push(`| ${g.kind} | ${g.does} | ${g.codes.map((c) => `\`${c}\``).join(', ')} |`);
  return rows.join('\n');
}

const BLOCKS: Record<string, () => string> = { 'effect-table': effectTable, 'error-table': errorTable };

/** `doc` with every generated block rendered again from the policy. */
export function renderContract(doc: string): string {
  return doc.replace(
    /(<!-- generated: ([a-z-]+) -->)\n(?:(?!<!-- generated:)[\s\S])*?(<!-- \/generated -->)/g,
    (_all, open: string, name: string, close: string) => {
      const make = BLOCKS[name];
      if (!make) throw new Error(`docs/contract.md: no generator for block "${name}" (known: ${Object.keys(BLOCKS).join(', ')}).`);
      return `${open}\n${make()}\n${close}`;
    },
  );
}

if (require.main === module) {
  fs.writeFileSync(CONTRACT_DOC, renderContract(fs.readFileSync(CONTRACT_DOC, 'utf8')));
  process.stdout.write(`${CONTRACT_DOC} written\n`);
}
