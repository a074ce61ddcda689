// The runner's stdout and stderr as the Debug Console shows them: secrets masked even when one write splits them.

import type { SecretMask } from '../shared/secrets';

/**
 * One output stream. A chunk that ends with the first characters of a secret keeps them back until the next chunk
 * (or a flush) tells whether the secret follows, so a secret split across two pipe reads is still masked whole.
 */
export class MaskedStream {
  private held = '';

  constructor(private readonly mask: () => SecretMask) {}

  /** What can be shown now: masked, minus an end that may be the start of a secret. */
  push(text: string): string {
    const mask = this.mask();
    const masked = mask.text(this.held + text);
    const keep = mask.partialTail(masked);
    this.held = masked.slice(masked.length - keep);
    return masked.slice(0, masked.length - keep);
  }

  /** Whatever was held back, masked: at a stop, at the end, or when nothing more came. */
  flush(): string {
    const text = this.mask().text(this.held);
    this.held = '';
    return text;
  }

  get holding(): boolean {
    return this.held.length > 0;
  }
}
