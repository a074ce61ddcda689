// The runtime's warnings: where they go (masked), and the one about input and args fields named like secrets.

import { SecretMask, secretFieldPaths } from '../shared/secrets';

/** A quick look at args as journaled for a key that might be secret-like, before walking them. */
export const SECRET_FIELD_HINT = /(?:pass|secret|token|key|auth|cred|pwd)[^"]*"\s*:/i;

/**
 * Where the runtime's warnings go (stderr unless the host says), with the environment's secrets masked: an error's
 * message quoted in a warning may hold an API key a request echoed.
 */
export function maskedLog(to: ((line: string) => void) | undefined): (line: string) => void {
  const out = to ?? ((line: string) => process.stderr.write(`${line}\n`));
  return (line) => out(SecretMask.ofEnv(process.env).text(line));
}

/** Inputs and args are journaled as given: a field named like a secret is warned about (by its path, never its value). */
export function warnSecretFields(value: unknown, root: string, what: string, log: (line: string) => void, warned?: Set<string>): void {
  for (const at of secretFieldPaths(value, root)) {
    const field = `${what}: ${at}`;
    if (warned?.has(field)) continue;
    warned?.add(field);
    log(
      `warning: ${at} is named like a secret, and ${what} is journaled in plain text (a resume reads it back); its value is not shown. Keep secrets in the environment and read them where they are used (process.env inside execute), not in ${root === 'input' ? 'the input' : root === 'data' ? "an event's data" : 'the args'}.`,
    );
  }
}
