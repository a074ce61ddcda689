// AI SDK 6 and 7 behind one API (src/ai/spec.ts), seen from AI SDK 6: the installed spec, model checks, and the converted shapes.

import { strict as assert } from 'node:assert';
import { ErrorCodes, LogbookError } from '../../src/runtime';
import { logbookMiddleware, logbookModel } from '../../src/ai';
import { checkModelSpec, generateResultFor, paramsForFingerprint, sdkSpec, streamPartsFor } from '../../src/ai/spec';
import { callParams } from '../../src/ai/fingerprint';
import { scriptedModel } from './mock';

const run = {
  id: 'r',
  agent: 'a',
  attempt: 1,
  step: () => Promise.resolve(),
  do: () => Promise.resolve(),
  currentStep: () => undefined,
  note: () => undefined,
} as never;
const bytes = new TextEncoder().encode('receipt');

describe('ai: one API for AI SDK 6 and 7', () => {
  it('knows the installed SDK is AI SDK 6: its models and middleware are "v3"', () => {
    assert.equal(sdkSpec(), 'v3');
    assert.equal(logbookMiddleware(run).specificationVersion, 'v3');
    assert.equal(logbookModel(run, scriptedModel(() => []).model).specificationVersion, 'v3');
  });

  it('refuses an AI SDK 7 ("v4") model under AI SDK 6, and a model of an unknown spec, each saying what to install or pass', () => {
    assert.throws(
      () => checkModelSpec({ specificationVersion: 'v4', provider: 'x', modelId: 'y' }),
      (e: unknown) =>
        e instanceof LogbookError &&
        e.code === ErrorCodes.INVALID_ARGS &&
        /specification "v4".*installed `ai` is AI SDK 6/.test(e.message) &&
        /Install ai@7 \(it needs Node 22 or newer\)/.test(e.remedy),
    );
    assert.throws(
      () => checkModelSpec({ specificationVersion: 'v2', provider: 'x', modelId: 'y' }),
      (e: unknown) =>
        e instanceof LogbookError &&
        e.code === ErrorCodes.INVALID_ARGS &&
        /specification "v2"; agent-logbook\/ai journals AI SDK 6 models \(specification "v3"\) and AI SDK 7 models \("v4"\)/.test(e.message),
    );
  });

  it("fingerprints a call the same whichever major asked: tagged v4 file data, and v7's toolChoice auto without tools", () => {
    const url = new URL('https://example.com/a.png');
    const v3 = {
      prompt: [
        {
          role: 'user',
          content: [
            { type: 'file', mediaType: 'image/png', data: bytes },
            { type: 'file', mediaType: 'image/png', data: url },
            { type: 'text', text: 'look' },
          ],
        },
      ],
      temperature: 0,
    };
    const v4 = {
      ...v3,
      toolChoice: { type: 'auto' },
      prompt: [
        {
          role: 'user',
          content: [
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: bytes } },
            { type: 'file', mediaType: 'image/png', data: { type: 'url', url } },
            { type: 'text', text: 'look' },
          ],
        },
      ],
    };
    assert.deepEqual(callParams(paramsForFingerprint(v4)), callParams(paramsForFingerprint(v3)));
    // With tools, toolChoice is the caller's choice and stays; so does a v4-only kind of file data.
    const tools = [{ type: 'function', name: 't', inputSchema: {} }];
    assert.deepEqual(paramsForFingerprint({ tools, toolChoice: { type: 'auto' } }).toolChoice, { type: 'auto' });
    const ref = {
      prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: { type: 'reference', reference: { openai: 'file-1' } } }] }],
    };
    assert.deepEqual(paramsForFingerprint(ref), ref);
  });

  it('gives a journaled answer in the shape of the call: files as v3 bytes or v4 tagged data, v4-only finish reasons as "other"', () => {
    const v3Result = {
      content: [
        { type: 'text', text: 'hi' },
        { type: 'file', mediaType: 'text/plain', data: bytes },
      ],
      finishReason: { unified: 'stop', raw: undefined },
    };
    const asV4 = generateResultFor(v3Result, 'v4', 'model:1.1');
    assert.deepEqual(asV4.content, [
      { type: 'text', text: 'hi' },
      { type: 'file', mediaType: 'text/plain', data: { type: 'data', data: bytes } },
    ]);
    assert.deepEqual(generateResultFor(asV4, 'v3', 'model:1.1'), v3Result, 'and back');
    assert.deepEqual(generateResultFor({ content: [], finishReason: { unified: 'interrupted', raw: 'eof' } }, 'v3', 'model:1.1').finishReason, {
      unified: 'other',
      raw: 'eof',
    });
    const parts = [
      { type: 'file', mediaType: 'text/plain', data: { type: 'data', data: bytes } },
      { type: 'finish', finishReason: { unified: 'interrupted', raw: undefined } },
    ];
    assert.deepEqual(streamPartsFor(parts, 'v3', 'model:2.1'), [
      { type: 'file', mediaType: 'text/plain', data: bytes },
      { type: 'finish', finishReason: { unified: 'other', raw: undefined } },
    ]);
    assert.deepEqual(streamPartsFor(parts, 'v4', 'model:2.1'), parts, 'a v4 call takes v4 parts as they are');
  });

  it('stops, naming the call and the remedy, on a v4 answer AI SDK 6 cannot take (a file by URL, a custom part)', () => {
    for (const part of [
      { type: 'file', mediaType: 'image/png', data: { type: 'url', url: new URL('https://example.com/a.png') } },
      { type: 'custom', kind: 'openai.thing' },
    ]) {
      assert.throws(
        () => generateResultFor({ content: [part] }, 'v3', 'model:1.2'),
        (e: unknown) =>
          e instanceof LogbookError &&
          e.code === ErrorCodes.MODEL_DRIFT &&
          /Model call model:1\.2 was journaled under AI SDK 7/.test(e.message) &&
          /Resume this run with ai@7 installed/.test(e.remedy),
      );
    }
  });
});
