// Loads the exporter (dist/traces.js beside the bundle, or the source under tsx) the first time tracing is on, so the
// mapping and the OTLP encoders are in no process that does not trace, and the package carries them once.

import { createRequire } from 'node:module';
import * as path from 'node:path';

export type Exporter = typeof import('./export');

let loaded: Exporter | undefined;

export function loadExporter(): Exporter {
  if (loaded) return loaded;
  const file = __filename.endsWith('.ts') ? path.join(__dirname, 'export.ts') : path.join(__dirname, 'traces.js');
  loaded = createRequire(__filename)(file) as Exporter;
  return loaded;
}
