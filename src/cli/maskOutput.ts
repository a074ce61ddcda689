// The `logbook` process's stdout and stderr, masked: what a script prints (console.log of a key) included.

import { journalFlagValue } from '../shared/journalNames';
import { SecretMask, urlSecrets } from '../shared/secrets';

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

/**
 * Wraps process.stdout and process.stderr so every write is masked with the secrets of the environment as it is at
 * that write (a script may load its own .env) and the password of a --journal URL. A write is masked whole: a secret split
 * by the script across two writes is not recognised.
 */
export function maskProcessOutput(argv: readonly string[]): void {
  const db = journalFlagValue(argv);
  const extra = db ? urlSecrets(db) : [];
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as Write;
    const masked: Write = (chunk, ...rest) => {
      const mask = SecretMask.ofEnv(process.env, extra);
      if (mask.empty) return write(chunk, ...rest);
      if (typeof chunk === 'string') return write(mask.text(chunk), ...rest);
      if (chunk instanceof Uint8Array) {
        const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
        const shown = mask.text(text);
        return write(shown === text ? chunk : shown, ...rest);
      }
      return write(chunk, ...rest);
    };
    stream.write = masked;
  }
}
