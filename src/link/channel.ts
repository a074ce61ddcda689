// Framed JSON over a stream (4-byte big-endian length, then UTF-8 JSON), each message validated with zod on receipt.

import type { Duplex } from 'node:stream';
import type * as z from 'zod/mini';
import { ENGLISH } from '../shared/zodEnglish';

const MAX_FRAME = 64 * 1024 * 1024;

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

/** Splits a byte stream into frames; keeps partial frames across chunks. */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): string[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: string[] = [];
    while (this.buf.length >= 4) {
      const len = this.buf.readUInt32BE(0);
      if (len > MAX_FRAME) throw new ProtocolError(`a frame of ${len} bytes exceeds the ${MAX_FRAME}-byte limit`);
      if (this.buf.length < 4 + len) break;
      out.push(this.buf.toString('utf8', 4, 4 + len));
      this.buf = this.buf.subarray(4 + len);
    }
    return out;
  }
}

/** One end of the adapter ⇄ runner pipe: `In` is what this end receives, `Out` what it sends. */
export class Channel<In, Out> {
  private readonly decoder = new FrameDecoder();
  private closed = false;

  constructor(
    private readonly stream: Duplex,
    private readonly schema: z.ZodMiniType<In>,
    private readonly onMessage: (m: In) => void,
    private readonly onError: (err: Error) => void,
    onClose: () => void,
  ) {
    stream.on('data', (chunk: Buffer) => {
      let frames: string[];
      try {
        frames = this.decoder.push(chunk);
      } catch (err) {
        this.onError(err as Error);
        return;
      }
      for (const f of frames) this.receive(f);
    });
    const close = (): void => {
      if (this.closed) return;
      this.closed = true;
      onClose();
    };
    stream.on('end', close);
    stream.on('close', close);
    stream.on('error', (err) => {
      // EPIPE/ECONNRESET mean the other process is gone; its exit is reported separately.
      if ((err as NodeJS.ErrnoException).code !== 'EPIPE' && (err as NodeJS.ErrnoException).code !== 'ECONNRESET') this.onError(err);
      close();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private receive(text: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      this.onError(new ProtocolError(`a message is not JSON: ${(err as Error).message}`));
      return;
    }
    const parsed = this.schema.safeParse(raw, ENGLISH);
    if (!parsed.success) {
      const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`).join('; ');
      this.onError(new ProtocolError(`a message does not match the protocol (${where})`));
      return;
    }
    this.onMessage(parsed.data);
  }

  send(message: Out): void {
    if (this.closed) return;
    this.stream.write(encodeFrame(message));
  }

  /** Resolves once everything written so far has been handed to the OS. */
  flush(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) resolve();
      else this.stream.write(Buffer.alloc(0), () => resolve());
    });
  }

  end(): void {
    this.closed = true;
    this.stream.end();
  }
}
