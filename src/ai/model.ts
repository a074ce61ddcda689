// logbookModel: a language model whose every call is a journaled, fingerprinted action, replayed free on resume.

import { wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult, LanguageModelV3Middleware, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { RunApi } from 'agent-logbook';
import { decode, encode } from './codec';
import { callParams } from './fingerprint';
import { countReplay, generateAction, journaledCall, streamAction, type ModelOptions } from './calls';
import { callSpec, checkModelSpec, generateResultFor, paramsForFingerprint, sdkSpec, streamPartsFor } from './spec';
import { withCallInfo } from './replay';
import { stateOf } from './attemptState';
import { streamJournaled } from './stream';
import { modelCallSite, noteEntry } from './site';

export type { ModelOptions, DriftPolicy } from './calls';

/** A model the installed AI SDK can wrap: a "v3" model under AI SDK 6; a "v3" or "v4" one under AI SDK 7. */
export type LogbookLanguageModel = Parameters<typeof wrapLanguageModel>[0]['model'];
/** What the installed AI SDK's wrapLanguageModel returns: a "v3" model under AI SDK 6, a "v4" one under AI SDK 7. */
export type LogbookWrappedModel = ReturnType<typeof wrapLanguageModel>;

/**
 * Wraps a model so that each call is journaled as an idempotent action keyed by its place in the run
 * (`model:<step>.<call>`), with its parameters as args: a resume answers recorded calls from the journal, and a call
 * whose parameters changed stops the run with a diff (or, with `onDrift: 'rerun'`, is made again). Works with AI SDK
 * 6 and 7: the model is wrapped by the installed `ai`'s wrapLanguageModel, so it is of the spec that SDK calls.
 */
export function logbookModel(run: RunApi, model: LogbookLanguageModel, options: ModelOptions = {}): LogbookWrappedModel {
  checkModelSpec(model);
  const wrapped = wrapLanguageModel({ model, middleware: logbookMiddleware(run, options) });
  // generateText and streamText read the spec version synchronously, inside the user's call: the moment to note its
  // line, for streamText's model calls, which run detached from the caller's stack.
  const spec = wrapped.specificationVersion;
  try {
    Object.defineProperty(wrapped, 'specificationVersion', {
      get: () => {
        noteEntry();
        return spec;
      },
      enumerable: true,
      configurable: true,
    });
  } catch {
    // A frozen model: its calls are placed from the stack alone.
  }
  return wrapped;
}

/** The journaled args of a call: the model and its fingerprinted parameters, the same under either SDK major. */
function callArgs(model: { provider: string; modelId: string }, params: object): { model: string; params: Record<string, unknown> } {
  return { model: `${model.provider}/${model.modelId}`, params: callParams(paramsForFingerprint(params as Record<string, unknown>)) };
}

/**
 * The middleware behind logbookModel, for use with wrapLanguageModel next to other middleware. Its
 * specificationVersion is the installed AI SDK's ("v3" for AI SDK 6, "v4" for 7), and so is its type.
 */
export function logbookMiddleware(run: RunApi, options: ModelOptions = {}): LanguageModelMiddleware {
  const state = stateOf(run);
  const policy = options.onDrift ?? 'fail';
  // The v3 types describe a v4 call too in every field read here; the shapes that differ go through ./spec.
  const middleware: Omit<LanguageModelV3Middleware, 'specificationVersion'> & { specificationVersion: string } = {
    specificationVersion: sdkSpec(),
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const at = modelCallSite();
      state.throwIfHalted();
      const args = callArgs(model, params);
      const place = state.place(JSON.stringify(args), 'generateText');
      state.warnUnjournaled(params.tools, place.key, options.unjournaledTools);
      let live = false;
      let journaled: { value: unknown; call: string };
      try {
        journaled = await journaledCall(
          state,
          generateAction,
          place,
          args,
          policy,
          async (a) => {
            live = true;
            return recorded(await (options.keyHeader ? model.doGenerate(keyed(params, options.keyHeader, `${run.id}:${a.call}`)) : doGenerate()));
          },
          at,
        );
      } catch (err) {
        state.failed(place);
        throw err;
      }
      const result = generateResultFor(
        decode(journaled.value) as Record<string, unknown>,
        callSpec(model),
        journaled.call,
      ) as unknown as LanguageModelV3GenerateResult;
      if (!live) countReplay(state, journaled.call, model, result.usage, options);
      state.ownTools(journaled.call, result.content);
      return { ...result, providerMetadata: withCallInfo(result.providerMetadata, journaled.call, !live) } as LanguageModelV3GenerateResult;
    },
    wrapStream: ({ doStream, params, model }) => {
      const at = modelCallSite();
      state.throwIfHalted();
      const args = callArgs(model, params);
      const place = state.place(JSON.stringify(args), 'streamText');
      state.warnUnjournaled(params.tools, place.key, options.unjournaledTools);
      const call = options.keyHeader
        ? (a: { call: string }) => model.doStream(keyed(params, options.keyHeader ?? '', `${run.id}:${a.call}`))
        : () => doStream();
      return streamJournaled(state, place, call, {
        journal: (fn) => journaledCall(state, streamAction, place, args, policy, fn, at),
        forCall: (call, parts) => streamPartsFor(parts, callSpec(model), call),
        replayed: (call, parts) => {
          const finish = parts.find((p): p is Extract<LanguageModelV3StreamPart, { type: 'finish' }> => p.type === 'finish');
          countReplay(state, call, model, finish?.usage, options);
        },
      });
    },
  };
  return middleware as LanguageModelMiddleware;
}

function keyed(params: LanguageModelV3CallOptions, header: string, key: string): LanguageModelV3CallOptions {
  return { ...params, headers: { ...params.headers, [header]: key } };
}

/** What is journaled of a generate result: all of it but raw HTTP bodies and headers, which replay cannot honour
 *  (AI SDK 7's structuredOutputText, the text its structured output parses, included). */
function recorded(r: LanguageModelV3GenerateResult & { structuredOutputText?: string }): unknown {
  const response = r.response ? { id: r.response.id, timestamp: r.response.timestamp, modelId: r.response.modelId } : undefined;
  return encode({
    content: r.content,
    finishReason: r.finishReason,
    usage: r.usage,
    providerMetadata: r.providerMetadata,
    response,
    warnings: r.warnings,
    structuredOutputText: r.structuredOutputText,
  });
}
