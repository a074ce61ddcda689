// An edited model answer for a "what-if" fork: checked against the recorded call's shape, merged into its result.

import { jsonOrUndefined } from './codec';

const FINISH: readonly string[] = ['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other'];

type Part = { type: 'text' | 'reasoning'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One edited part, checked field by field so that each problem says where it is and what was expected. */
function checkPart(p: unknown, at: string, problems: string[]): Part | undefined {
  if (!isObject(p)) return void problems.push(`${at}: a part is an object with a "type", not ${JSON.stringify(p)}`);
  if (p.type === 'text' || p.type === 'reasoning') {
    if (typeof p.text !== 'string') return void problems.push(`${at}.text: a ${p.type} part needs "text", a string`);
    return { type: p.type, text: p.text };
  }
  if (p.type === 'tool-call') {
    const bad = ['toolCallId', 'toolName'].filter((k) => typeof p[k] !== 'string' || p[k] === '');
    for (const k of bad) problems.push(`${at}.${k}: a tool-call part needs "${k}", a non-empty string`);
    let input: string | undefined;
    if (isObject(p.input)) input = JSON.stringify(p.input);
    else if (typeof p.input === 'string') {
      try {
        JSON.parse(p.input);
        input = p.input;
      } catch {
        problems.push(`${at}.input: not JSON text (give the tool's input as an object, or as its JSON)`);
      }
    } else problems.push(`${at}.input: a tool-call part needs "input", the tool's input as an object`);
    if (bad.length || input === undefined) return undefined;
    return { type: 'tool-call', toolCallId: String(p.toolCallId), toolName: String(p.toolName), input };
  }
  return void problems.push(`${at}.type: ${JSON.stringify(p.type)} is not a part an answer can be edited to ("text", "reasoning" or "tool-call")`);
}

/** What `logbook fork --edit-model-answer` accepts, in words, for its error messages. */
export const EDITED_ANSWER_SHAPE =
  'a JSON object {"content": [parts], "finishReason"?: "stop" | "tool-calls" | …} or just the [parts] array, where a part is {"type":"text","text":"…"}, {"type":"reasoning","text":"…"} or {"type":"tool-call","toolCallId":"…","toolName":"…","input":{…}}';

export type EditedAnswer = { readonly ok: true; readonly result: string } | { readonly ok: false; readonly problems: string[] };

/**
 * The journaled result a model call gets in a fork when its answer is edited: the recorded result (usage, response,
 * provider metadata) with the edited content and a finish reason that fits it; for a streamed call, the parts a
 * stream of that content gives (text and reasoning as start, one delta, end), between the recorded stream-start and a
 * finish with the recorded usage. Problems are the edited answer's, each saying where.
 */
export function editModelAnswer(type: string, recordedArgs: string, recordedResult: string | null, edited: unknown): EditedAnswer {
  if (type !== 'model.generate' && type !== 'model.stream')
    return { ok: false, problems: [`the action is a ${type}, not a model call (model.generate or model.stream)`] };
  const given: Record<string, unknown> = Array.isArray(edited) ? { content: edited } : isObject(edited) ? edited : {};
  if (!Array.isArray(given.content))
    return {
      ok: false,
      problems: [`the answer is ${Array.isArray(edited) || isObject(edited) ? 'an object without a "content" array' : JSON.stringify(edited)}`],
    };
  const problems: string[] = [];
  for (const k of Object.keys(given))
    if (!['content', 'finishReason', 'usage', 'providerMetadata'].includes(k))
      problems.push(`${k}: not a field of an answer (content, finishReason, usage, providerMetadata)`);
  const parts = given.content.map((p, i) => checkPart(p, `content.${i}`, problems)).filter((p): p is Part => p !== undefined);
  const finishGiven = given.finishReason;
  const finishWord = isObject(finishGiven) ? finishGiven.unified : finishGiven;
  if (finishGiven !== undefined && (typeof finishWord !== 'string' || !FINISH.includes(finishWord)))
    problems.push(`finishReason: ${JSON.stringify(finishGiven)} is not one of ${FINISH.join(', ')}`);
  const params = (jsonOrUndefined(recordedArgs) as { params?: { tools?: unknown } } | undefined)?.params;
  const tools = Array.isArray(params?.tools) ? (params.tools as Array<{ name?: unknown }>).map((t) => String(t.name)) : [];
  const ids = new Set<string>();
  parts.forEach((p, i) => {
    if (p.type !== 'tool-call') return;
    if (!tools.includes(p.toolName))
      problems.push(
        `content.${i}.toolName: the model was offered no tool ${JSON.stringify(p.toolName)} in this call (it had ${tools.length ? tools.join(', ') : 'none'})`,
      );
    if (ids.has(p.toolCallId)) problems.push(`content.${i}.toolCallId: ${JSON.stringify(p.toolCallId)} is used twice`);
    ids.add(p.toolCallId);
  });
  const content = parts;
  if (given.content.length === 0) problems.push('content is empty: give the model something to say (a text part) or to do (a tool-call part)');
  if (problems.length) return { ok: false, problems };
  const recorded = (jsonOrUndefined(recordedResult) ?? {}) as Record<string, unknown>;
  if (type === 'model.stream') return { ok: true, result: JSON.stringify({ parts: streamParts(recorded, content, finishGiven, finishWord, given.usage) }) };
  const finishReason = isObject(finishGiven)
    ? finishGiven
    : { unified: typeof finishWord === 'string' ? finishWord : content.some((p) => p.type === 'tool-call') ? 'tool-calls' : 'stop' };
  const result = {
    ...recorded,
    content,
    finishReason,
    ...(given.usage !== undefined ? { usage: given.usage } : {}),
    ...(given.providerMetadata !== undefined ? { providerMetadata: given.providerMetadata } : {}),
  };
  return { ok: true, result: JSON.stringify(result) };
}

/** The stream parts of an edited content, framed by the recorded call's own stream-start and finish (its usage). */
function streamParts(recorded: Record<string, unknown>, content: Part[], finishGiven: unknown, finishWord: unknown, usage: unknown): unknown[] {
  const old = Array.isArray(recorded.parts) ? (recorded.parts as Array<Record<string, unknown>>) : [];
  const start = old.find((p) => p.type === 'stream-start') ?? { type: 'stream-start', warnings: [] };
  const finish = old.find((p) => p.type === 'finish') ?? { type: 'finish' };
  const out: unknown[] = [start];
  content.forEach((p, i) => {
    if (p.type === 'tool-call') out.push(p);
    else out.push({ type: `${p.type}-start`, id: `e${i}` }, { type: `${p.type}-delta`, id: `e${i}`, delta: p.text }, { type: `${p.type}-end`, id: `e${i}` });
  });
  const unified = typeof finishWord === 'string' ? finishWord : content.some((p) => p.type === 'tool-call') ? 'tool-calls' : 'stop';
  out.push({ ...finish, finishReason: isObject(finishGiven) ? finishGiven : { unified }, ...(usage !== undefined ? { usage } : {}) });
  return out;
}
