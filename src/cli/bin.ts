// Entry point of the `logbook` executable.

import { maskProcessOutput } from './maskOutput';
import { main } from './cliMain';

maskProcessOutput(process.argv.slice(2));
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  },
);
