// AI SDK 6 (language model spec "v3") and 7 ("v4") behind one code path: which one is installed, and the few shapes that differ.

import { wrapLanguageModel } from 'ai';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { ErrorCodes, LogbookError } from 'agent-logbook';

/**
 * The language model specification a call is made in: "v3" under AI SDK 6, "v4" under AI SDK 7. Every field the
 * journal reads by name (text and reasoning deltas, tool calls, `finish` with usage `inputTokens.total` and
 * `finishReason.unified`, response metadata) has the same shape in both; what differs is converted here, at the
 * journal's edge: generated files (v3 holds their bytes, v4 a tagged `{ type: 'data' | 'url', … }`), the file parts
 * of a prompt, parts only v4 has, and v4's `interrupted` finish reason.
 */
export type Spec = 'v3' | 'v4';

const KNOWN: readonly string[] = ['v3', 'v4'];

let installed: Spec | undefined;

/**
 * The spec the installed `ai` wraps models into (its wrapLanguageModel returns "v3" in AI SDK 6 and "v4" in AI SDK 7,
 * whatever the model's own spec). Asked once, of the `ai` the user's project resolves.
 */
export function sdkSpec(): Spec {
  if (installed) return installed;
  const probe = { specificationVersion: 'v3', provider: 'logbook', modelId: 'spec-probe', supportedUrls: {} } as unknown as LanguageModelV3;
  const got = (wrapLanguageModel({ model: probe, middleware: {} as never }) as { specificationVersion?: unknown }).specificationVersion;
  installed = got === 'v4' ? 'v4' : 'v3';
  return installed;
}

/** Only the models the installed SDK can wrap: AI SDK 6 takes v3 models, AI SDK 7 takes v3 and v4 (it lifts v3 to v4). */
export function checkModelSpec(model: unknown): void {
  const spec = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
  const sdk = sdkSpec();
  const what = typeof model === 'object' && model !== null ? `a language model of specification ${JSON.stringify(spec)}` : JSON.stringify(model);
  if (typeof spec === 'string' && KNOWN.includes(spec)) {
    if (spec === 'v4' && sdk === 'v3') {
      throw new LogbookError(
        ErrorCodes.INVALID_ARGS,
        'logbookModel was given a language model of specification "v4" (an AI SDK 7 provider), but the installed `ai` is AI SDK 6, which only takes "v3" models.',
        'Install ai@7 (it needs Node 22 or newer) next to your AI SDK 7 providers, or use the AI SDK 6 release of the provider package (e.g. @ai-sdk/openai 3.x).',
      );
    }
    return;
  }
  throw new LogbookError(
    ErrorCodes.INVALID_ARGS,
    `logbookModel was given ${what}; agent-logbook/ai journals AI SDK 6 models (specification "v3") and AI SDK 7 models ("v4").`,
    sdk === 'v4'
      ? 'Pass a provider model object from an AI SDK 7 or 6 provider package (e.g. openai("gpt-4.1") from @ai-sdk/openai), not a model id string or a model of an older SDK major.'
      : 'Pass a provider model object from an AI SDK 6 provider package (e.g. openai("gpt-4.1") from @ai-sdk/openai 3.x), not a model id string or a model of another SDK major.',
  );
}

/** The spec of the model a middleware was handed; the SDK converted it to its own, so this is the spec of the call. */
export function callSpec(model: unknown): Spec {
  return (model as { specificationVersion?: unknown }).specificationVersion === 'v4' ? 'v4' : 'v3';
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof URL);

/** v4 file data, tagged: `{ type: 'data', data }`, `{ type: 'url', url }`, `{ type: 'reference' | 'text', … }`. */
const isTaggedData = (d: unknown): d is Obj => isObj(d) && typeof d.type === 'string';

/**
 * Call options as AI SDK 6 writes them, for the fingerprint, so a call journaled under one SDK major is recognised
 * under the other: v4's tagged file data in a prompt becomes the bytes or URL v3 holds, and the `toolChoice: auto` AI
 * SDK 7 sends with no tools (AI SDK 6 sends none; with no tool to choose, both mean the same) is left out.
 */
export function paramsForFingerprint(params: Obj): Obj {
  const { toolChoice, ...rest } = params;
  const noTools = !Array.isArray(params.tools) || params.tools.length === 0;
  const out = noTools && isObj(toolChoice) && toolChoice.type === 'auto' && Object.keys(toolChoice).length === 1 ? rest : params;
  if (!Array.isArray(out.prompt)) return out;
  const prompt = (out.prompt as unknown[]).map((m) => {
    if (!isObj(m) || !Array.isArray(m.content)) return m;
    const content = (m.content as unknown[]).map((p) => {
      if (!isObj(p) || p.type !== 'file' || !isTaggedData(p.data)) return p;
      const d = p.data;
      return d.type === 'data' ? { ...p, data: d.data } : d.type === 'url' ? { ...p, data: d.url } : p;
    });
    return { ...m, content };
  });
  return { ...out, prompt };
}

/** Parts only v4 has: a v3 SDK has no way to take them. */
const V4_ONLY = ['reasoning-file', 'custom'];

function incompatible(call: string, what: string): LogbookError {
  return new LogbookError(
    ErrorCodes.MODEL_DRIFT,
    `Model call ${call} was journaled under AI SDK 7 and its answer holds ${what}, which the installed AI SDK 6 cannot take. Nothing new was executed.`,
    'Resume this run with ai@7 installed (Node 22 or newer), as it was recorded; or start a new run.',
    { call },
  );
}

/** One content or stream part of a journaled answer, as the call's spec wants it. */
function partFor(p: unknown, spec: Spec, call: string): unknown {
  if (!isObj(p) || typeof p.type !== 'string') return p;
  if (spec === 'v4') {
    if ((p.type === 'file' || p.type === 'reasoning-file') && !isTaggedData(p.data)) return { ...p, data: { type: 'data', data: p.data } };
    return p;
  }
  if (V4_ONLY.includes(p.type)) throw incompatible(call, `a "${p.type}" part`);
  if (p.type === 'file' && isTaggedData(p.data)) {
    if (p.data.type === 'data') return { ...p, data: p.data.data };
    throw incompatible(call, `a file given by ${String(p.data.type)}`);
  }
  if (p.type === 'finish') return { ...p, finishReason: finishFor(p.finishReason) };
  return p;
}

/** v4's `interrupted` (a stream that ended without a finish signal) is `other` to v3. */
function finishFor(r: unknown): unknown {
  return isObj(r) && r.unified === 'interrupted' ? { ...r, unified: 'other' } : r;
}

/** A journaled generate result (decoded), as the call's spec wants it, whichever SDK major recorded it. */
export function generateResultFor(result: Obj, spec: Spec, call: string): Obj {
  const content = Array.isArray(result.content) ? (result.content as unknown[]).map((p) => partFor(p, spec, call)) : result.content;
  return spec === 'v4' ? { ...result, content } : { ...result, content, finishReason: finishFor(result.finishReason) };
}

/** Journaled stream parts (decoded), as the call's spec wants them, whichever SDK major recorded them. */
export function streamPartsFor<P>(parts: P[], spec: Spec, call: string): P[] {
  return parts.map((p) => partFor(p, spec, call) as P);
}
