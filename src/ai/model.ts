// logbookModel: a language model whose every call is a journaled, fingerprinted action, replayed free on resume.

import { wrapLanguageModel } from 'ai';
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult, LanguageModelV3Middleware, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { ErrorCodes, LogbookError, type RunApi } from 'agent-logbook';
import { decode, encode } from './codec';
import { callParams } from './fingerprint';
import { countReplay, generateAction, journaledCall, streamAction, type ModelOptions } from './calls';
import { stateOf } from './state';
import { streamJournaled } from './stream';

export type { ModelOptions, DriftPolicy } from './calls';

/**
 * Wraps a model so that each call is journaled as an idempotent action keyed by its place in the run
 * (`model:<step>.<call>`), with its parameters as args: a resume answers recorded calls from the journal, and a call
 * whose parameters changed stops the run with a diff (or, with `onDrift: 'rerun'`, is made again).
 */
export function logbookModel(run: RunApi, model: LanguageModelV3, options: ModelOptions = {}): LanguageModelV3 {
  const spec = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
  if (spec !== 'v3') {
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      `logbookModel was given ${typeof model === 'object' && model !== null ? `a language model of specification ${JSON.stringify(spec)}` : JSON.stringify(model)}; agent-logbook/ai journals AI SDK 6 models (specification "v3").`,
      'Pass a provider model object from an AI SDK 6 provider package (e.g. openai("gpt-4.1") from @ai-sdk/openai 3.x), not a model id string or a model of another SDK major.',
    );
  }
  return wrapLanguageModel({ model, middleware: logbookMiddleware(run, options) });
}

/** The middleware behind logbookModel, for use with wrapLanguageModel next to other middleware. */
export function logbookMiddleware(run: RunApi, options: ModelOptions = {}): LanguageModelV3Middleware {
  const state = stateOf(run);
  const policy = options.onDrift ?? 'fail';
  return {
    specificationVersion: 'v3',
    wrapGenerate: async ({ doGenerate, params, model }) => {
      state.throwIfHalted();
      const args = { model: `${model.provider}/${model.modelId}`, params: callParams(params) };
      const place = state.place(JSON.stringify(args), 'generateText');
      let live = false;
      let journaled: { value: unknown; call: string };
      try {
        journaled = await journaledCall(state, generateAction, place, args, policy, async (a) => {
          live = true;
          return recorded(await (options.keyHeader ? model.doGenerate(keyed(params, options.keyHeader, `${run.id}:${a.call}`)) : doGenerate()));
        });
      } catch (err) {
        state.failed(place);
        throw err;
      }
      const result = decode(journaled.value) as LanguageModelV3GenerateResult;
      if (!live) countReplay(state, journaled.call, model, result.usage, options);
      state.ownTools(journaled.call, result.content);
      return result;
    },
    wrapStream: ({ doStream, params, model }) => {
      state.throwIfHalted();
      const args = { model: `${model.provider}/${model.modelId}`, params: callParams(params) };
      const place = state.place(JSON.stringify(args), 'streamText');
      const call = options.keyHeader ? (a: { call: string }) => model.doStream(keyed(params, options.keyHeader ?? '', `${run.id}:${a.call}`)) : () => doStream();
      return streamJournaled(state, place, call, {
        journal: (fn) => journaledCall(state, streamAction, place, args, policy, fn),
        replayed: (call, parts) => {
          const finish = parts.find((p): p is Extract<LanguageModelV3StreamPart, { type: 'finish' }> => p.type === 'finish');
          countReplay(state, call, model, finish?.usage, options);
        },
      });
    },
  };
}

function keyed(params: LanguageModelV3CallOptions, header: string, key: string): LanguageModelV3CallOptions {
  return { ...params, headers: { ...params.headers, [header]: key } };
}

/** What is journaled of a generate result: all of it but raw HTTP bodies and headers, which replay cannot honour. */
function recorded(r: LanguageModelV3GenerateResult): unknown {
  const response = r.response ? { id: r.response.id, timestamp: r.response.timestamp, modelId: r.response.modelId } : undefined;
  return encode({ content: r.content, finishReason: r.finishReason, usage: r.usage, providerMetadata: r.providerMetadata, response, warnings: r.warnings });
}

