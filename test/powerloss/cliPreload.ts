// Preloaded into `logbook run` (node --require) by the CLI control: the shim records the journal and fails one fsync.

import * as path from 'node:path';
import { loadShim } from './shim';

const log = process.env.POWERLOSS_LOG;
const failAt = Number(process.env.POWERLOSS_FAIL_SYNC);
if (log && failAt > 0) {
  const shim = loadShim();
  shim.record(log, path.resolve(process.env.POWERLOSS_DIR ?? '.'));
  shim.failSync(failAt);
}
