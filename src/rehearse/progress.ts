// A one-line progress bar on a terminal (stderr), and nothing at all when output is piped.

export interface Progress {
  tick(done: number, brokenSoFar: number): void;
  end(): void;
}

export function progressBar(total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY || total === 0) return { tick: () => undefined, end: () => undefined };
  const started = Date.now();
  const width = 30;
  return {
    tick(done, brokenSoFar) {
      const filled = Math.round((done / total) * width);
      const elapsed = (Date.now() - started) / 1000;
      const eta = done > 0 ? Math.round((elapsed / done) * (total - done)) : 0;
      const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
      stream.write(
        `\r  [${bar}] ${done}/${total} campaigns${brokenSoFar ? `, ${brokenSoFar} broken` : ''}${done < total ? `, about ${eta}s left` : ''}\u001b[K`,
      );
    },
    end() {
      stream.write('\r\u001b[K');
    },
  };
}
