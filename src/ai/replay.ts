// How the SDK's step callbacks tell a model answer replayed from the journal from one the model has just given.

/** What `providerMetadata.logbook` says of a step's model call. */
export interface ModelCallInfo {
  /** The journaled call (`model:1.2`): the same in every attempt of the run, so a callback can save a step once by it. */
  readonly call: string;
  /** True when the answer came from the journal (a resumed run), false when the model was called for it now. */
  readonly replayed: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A result's provider metadata with `logbook: { call, replayed }` added. Result-level metadata reaches the step
 * (`onStepFinish`, `steps[i]`, `onFinish`) but not the messages sent back to the model, so it cannot change the
 * prompt of a later call, which the drift check fingerprints. It is added after the result is journaled, never to it.
 */
export function withCallInfo(meta: unknown, call: string, replayed: boolean): Record<string, Record<string, unknown>> {
  const info: ModelCallInfo = { call, replayed };
  return { ...(isObject(meta) ? (meta as Record<string, Record<string, unknown>>) : {}), logbook: { ...info } };
}

/**
 * The journal's word on a step of generateText / streamText (what `onStepFinish` gets, a result's `steps[i]`,
 * `onFinish`'s event): which journaled model call answered it and whether that answer was replayed. Undefined for a
 * step whose model is not a logbookModel.
 *
 *   onStepFinish: (step) => { if (!modelCallOf(step)?.replayed) console.log(step.text) }
 */
export function modelCallOf(step: { readonly providerMetadata?: unknown } | undefined): ModelCallInfo | undefined {
  const meta = step?.providerMetadata;
  const info = isObject(meta) ? meta.logbook : undefined;
  if (!isObject(info) || typeof info.call !== 'string' || typeof info.replayed !== 'boolean') return undefined;
  return { call: info.call, replayed: info.replayed };
}
