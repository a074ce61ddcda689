// A streamed model call through the journal: deltas pass live, `finish` waits for the commit, replays re-emit parts.

import type { LanguageModelV3StreamPart, LanguageModelV3StreamResult } from '@ai-sdk/provider';
import type { RunApi } from 'agent-logbook';
import { decode, encode } from './codec';
import type { ModelCallArgs } from './fingerprint';
import { withCallInfo } from './replay';
import type { AiRunState, CallPlace } from './attemptState';

type Part = LanguageModelV3StreamPart;

export interface StreamJournal {
  /** Runs the call as its journaled action (or returns the journaled parts). */
  readonly journal: (fn: (args: ModelCallArgs) => Promise<unknown>) => Promise<{ value: unknown; call: string }>;
  /** The journaled parts as this call's spec wants them (a run recorded under the other AI SDK major). */
  readonly forCall: (call: string, parts: Part[]) => Part[];
  /** Called when the parts came from the journal, not from the model. */
  readonly replayed: (call: string, parts: Part[]) => void;
}

/** New text, or time with new text, after which the partial output is noted again, so a crash loses little of it. */
const NOTE_EVERY_CHARS = 80;
const NOTE_EVERY_MS = 200;

/** Notes what the model has said so far (`model.partial`), so a crash mid-stream leaves it for the debugger. */
class PartialNotes {
  private text = '';
  private noted = 0;
  private notedAt = Date.now();
  private parts = 0;
  private readonly toolCalls: Array<{ toolName: string; input: string }> = [];

  constructor(
    private readonly run: RunApi,
    private readonly call: string,
  ) {}

  saw(p: Part): void {
    this.parts++;
    if (p.type === 'text-delta' || p.type === 'reasoning-delta') this.text += p.delta;
    if (p.type === 'tool-call') {
      this.toolCalls.push({ toolName: p.toolName, input: p.input });
      this.write();
    } else if (this.text.length - this.noted >= NOTE_EVERY_CHARS || (this.text.length > this.noted && Date.now() - this.notedAt >= NOTE_EVERY_MS)) this.write();
  }

  /** The last words before an error: noted unless nothing new was said. */
  flush(): void {
    if (this.text.length > this.noted) this.write();
  }

  private write(): void {
    this.noted = this.text.length;
    this.notedAt = Date.now();
    this.run.note('model.partial', { call: this.call, text: this.text, parts: this.parts, toolCalls: this.toolCalls });
  }
}

export async function streamJournaled(
  state: AiRunState,
  place: CallPlace,
  doStream: (args: ModelCallArgs) => PromiseLike<LanguageModelV3StreamResult>,
  j: StreamJournal,
): Promise<LanguageModelV3StreamResult> {
  let controller!: ReadableStreamDefaultController<Part>;
  let cancelled = false;
  // A reader that stops listening does not stop the call: it is paid for, so it is read to the end and journaled.
  const stream = new ReadableStream<Part>({ start: (c) => void (controller = c), cancel: () => void (cancelled = true) });
  const out = {
    enqueue: (p: Part): void => {
      if (!cancelled) controller.enqueue(p);
    },
    close: (): void => {
      if (!cancelled) controller.close();
    },
  };
  let live = false;
  const held: Part[] = [];
  let opened!: () => void;
  let refused!: (err: unknown) => void;
  // Settles when parts can flow: the model answered (live) or the journal did (replay); rejects if neither happened.
  const open = new Promise<void>((resolve, reject) => {
    opened = resolve;
    refused = reject;
  });

  const fromModel = async (args: ModelCallArgs): Promise<unknown> => {
    const r = await doStream(args);
    live = true;
    opened();
    const notes = new PartialNotes(state.run, args.call);
    const parts: unknown[] = [];
    const reader = r.stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(encode(value));
        // `finish` tells the SDK the call is over: it waits until the parts are durable in the journal.
        if (value.type === 'finish') held.push(value);
        else out.enqueue(value);
        notes.saw(value);
      }
    } catch (err) {
      notes.flush();
      throw err;
    }
    return { parts };
  };

  const handOn = ({ value, call }: { value: unknown; call: string }): void => {
    const journaled = (decode(value) as { parts: Part[] }).parts;
    const parts = live ? journaled : j.forCall(call, journaled);
    // The finish part carries the step's provider metadata: there the step's callbacks learn whether it was replayed.
    const mark = (p: Part): Part =>
      p.type === 'finish' ? { ...p, providerMetadata: withCallInfo(p.providerMetadata, call, !live) as typeof p.providerMetadata } : p;
    if (live) {
      for (const p of held) out.enqueue(mark(p));
    } else {
      for (const p of parts) out.enqueue(mark(p));
      j.replayed(call, parts);
      opened();
    }
    state.ownTools(call, parts);
    out.close();
  };
  const failed = (err: unknown): void => {
    state.failed(place);
    if (!live) return refused(err);
    // Parts already went out: the call ends with an error part and is never silently made again.
    out.enqueue({ type: 'error', error: err });
    out.close();
  };
  j.journal(fromModel)
    .then(handOn, failed)
    .catch((err: unknown) => {
      // Journaled, but the parts could not be handed on (a part the journal could not decode): say so on the stream.
      refused(err);
      try {
        if (!cancelled) controller.error(err);
      } catch {
        // the stream was already closed: nothing more can be said on it
      }
    });
  await open;
  return { stream };
}
