// `logbook fork <run-id> --step <n|name> [--edit-model-answer F|-]`: a new run that replays the origin up to a step,
// and — the what-if — answers one model call of that step with an edited answer, then runs genuinely anew.

import * as fs from 'node:fs';
import { ErrorCodes, LogbookError, describe, runNotFound } from '../runtime/errors';
import { forkRun, newRunId } from '../runtime/engine';
import { openStore, type ForkSeed, type Store } from '../runtime/store';
import type { ActionRow, StepRow } from '../runtime/store/rows';
import { runExitCode } from '../runtime/policy';
import { loadScript } from '../loader/loadScript';
import { EDITED_ANSWER_SHAPE, editModelAnswer } from '../ai/answer';
import { dbPath, setStateDir, type CommandModule } from './journalOption';
import { parseCommandArgs } from './commandArgs';
import { paint, runStatusWord } from './format';

const USAGE = 'logbook fork <run-id> --step <n|name> [--edit-model-answer F|-] [--call model:S.C] [--run-id ID] [--script F] [--json]';
const MODEL_CALL = /^model:(\d+)\.(\d+)(?:~\d+)?$/;

function usage(problem: string, remedy = `Write \`${USAGE}\`.`): LogbookError {
  return new LogbookError(ErrorCodes.USAGE, problem, remedy);
}

/** The step `--step` names: its 1-based number as `logbook show` lists it, or its name. */
function stepOf(store: Store, runId: string, spec: string): StepRow {
  const steps = store.reader.steps(runId, 0, store.reader.stepCount(runId));
  const n = /^\d+$/.test(spec) ? Number(spec) : undefined;
  const found = n !== undefined ? steps.find((s) => s.idx === n - 1) : steps.find((s) => s.name === spec);
  if (!found) {
    const list = steps.map((s) => `#${s.idx + 1} ${s.name}`).join(', ') || 'none';
    throw usage(
      `Run ${runId} has no step ${n !== undefined ? `#${n}` : JSON.stringify(spec)} (its steps: ${list}).`,
      'Pass --step with a step number or name that `logbook show` lists.',
    );
  }
  return found;
}

function readAnswer(file: string): unknown {
  let text: string;
  try {
    text = file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.INVALID_INPUT,
      `Cannot read the edited model answer ${file === '-' ? 'from stdin' : file}: ${describe(err)}.`,
      'Check the path (or pipe the JSON in with `-`).',
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.INVALID_INPUT,
      `The edited model answer ${file === '-' ? '(stdin)' : file} is not JSON: ${describe(err)}.`,
      `Write ${EDITED_ANSWER_SHAPE}.`,
    );
  }
}

/**
 * What the fork inherits besides the steps before the fork point: the step's model calls before the edited one and
 * its read-only actions before it (what the model saw), and the edited call with its new answer. An effect of the
 * origin before the edited call in that step would be done again by the fork, so that is refused.
 */
function seedsFor(
  store: Store,
  runId: string,
  forkId: string,
  step: StepRow,
  callId: string | undefined,
  answer: unknown,
): { seeds: ForkSeed[]; call: ActionRow } {
  const rows = store.reader.actionsOfStep(runId, step.idx);
  const calls = rows.filter((a) => MODEL_CALL.test(a.id) && a.type.startsWith('model.'));
  if (calls.length === 0)
    throw usage(
      `Step #${step.idx + 1} "${step.name}" of run ${runId} made no journaled model call, so there is no answer to edit.`,
      'Pick a step whose model calls logbookModel journaled (`logbook show` lists them as model:<step>.<call>).',
    );
  const call = callId === undefined ? calls[0] : calls.find((a) => a.id === callId);
  if (!call)
    throw usage(
      `Step #${step.idx + 1} "${step.name}" of run ${runId} has no model call ${callId ?? ''} (it has ${calls.map((a) => a.id).join(', ')}).`,
      'Pass --call with one of them.',
    );
  if (call.status !== 'committed')
    throw usage(`Model call ${call.id} of run ${runId} is ${call.status}: it has no recorded answer to edit.`, 'Pick a committed model call.');
  const edited = editModelAnswer(call.type, call.args, call.result, answer);
  if (!edited.ok) {
    throw new LogbookError(
      ErrorCodes.INVALID_INPUT,
      `The edited answer does not fit model call ${call.id} of run ${runId}:\n${edited.problems.map((p) => `    ${p}`).join('\n')}\nNothing was written.`,
      `Write ${EDITED_ANSWER_SHAPE}; \`logbook show ${runId} --json\` (or the sidebar's Open Model or Tool Call in Full) shows the recorded answer to start from.`,
      { runId, call: call.id },
    );
  }
  const before = rows.filter((a) => a.seq < call.seq);
  const effect = before.find((a) => a.effect !== 'read-only' && !(MODEL_CALL.test(a.id) && a.type.startsWith('model.')));
  if (effect) {
    throw usage(
      `Model call ${call.id} comes after ${effect.type} ${effect.id} in step "${step.name}": a fork from there would do that effect again in its own name.`,
      `Edit an earlier model call of the step (${
        calls
          .filter((a) => a.seq < effect.seq)
          .map((a) => a.id)
          .join(', ') || 'none comes before it'
      }), or fork at a later step with --step.`,
    );
  }
  // A tool's default key names its run (tool:<run id>:…): in the fork it is found under the fork's id.
  const own = `tool:${runId}:`;
  const seeds: ForkSeed[] = before
    .filter((a) => a.status === 'committed')
    .map((a) => (a.id.startsWith(own) ? { id: a.id, as: `tool:${forkId}:${a.id.slice(own.length)}` } : { id: a.id }));
  seeds.push({ id: call.id, result: edited.result });
  return { seeds, call };
}

export const forkCommand: CommandModule = {
  name: 'fork',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseCommandArgs(
      args,
      {
        journal: { type: 'string' },
        json: { type: 'boolean' },
        step: { type: 'string' },
        'edit-model-answer': { type: 'string' },
        call: { type: 'string' },
        'run-id': { type: 'string' },
        script: { type: 'string' },
      },
      `Write \`${USAGE}\`.`,
    );
    const v = parsed.values;
    const [from, ...extra] = parsed.positionals;
    if (!from || extra.length) throw usage('Expected exactly one run id to fork.');
    if (v.step === undefined) throw usage('Say where the fork starts with --step <n|name>.');
    if (v.call !== undefined && v['edit-model-answer'] === undefined)
      throw usage('--call names the model call whose answer --edit-model-answer replaces; pass both.');
    const answer = v['edit-model-answer'] === undefined ? undefined : readAnswer(v['edit-model-answer']);
    const db = dbPath(v.journal);
    setStateDir(db);
    const store = openStore(db);
    try {
      const origin = store.reader.run(from);
      if (!origin) throw runNotFound(from);
      const step = stepOf(store, from, v.step);
      const runId = v['run-id'] ?? newRunId();
      const edit = answer === undefined ? undefined : seedsFor(store, from, runId, step, v.call, answer);
      const script = await loadScript(v.script ?? origin.script);
      // The origin's journaled input is the schema's output already: forkRun takes it as it is.
      const outcome = await forkRun(store, script.agent, { script: script.path, from, stepIdx: step.idx, runId, ...(edit ? { seeds: edit.seeds } : {}) });
      const exit = runExitCode(outcome.status);
      if (v.json) {
        io.out(
          JSON.stringify(
            { ...outcome, forkedFrom: { runId: from, step: step.idx + 1, stepName: step.name, ...(edit ? { editedCall: edit.call.id } : {}) } },
            null,
            2,
          ),
        );
        return exit;
      }
      io.out(`${paint('bold', outcome.runId)}  ${outcome.agent}  ${runStatusWord(outcome.status)}  (fork of ${from} at step #${step.idx + 1} "${step.name}")`);
      if (edit)
        io.out(
          `  what-if  ${edit.call.id} answered with the edited answer; ${edit.seeds.length - 1} earlier call(s) and read-only action(s) of the step inherited`,
        );
      io.out(`  steps    ${outcome.stats.stepsReplayed} replayed, ${outcome.stats.stepsRun} run`);
      if (outcome.status === 'completed') io.out(`  output   ${JSON.stringify(outcome.output)}`);
      if (outcome.error) io.out(paint('red', `  error    ${outcome.error.code ? `[${outcome.error.code}] ` : ''}${outcome.error.message}`));
      if (outcome.status !== 'completed') io.out(`  next     logbook show ${outcome.runId}; logbook resume ${outcome.runId}`);
      return exit;
    } finally {
      store.close();
    }
  },
};
