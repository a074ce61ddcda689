// `npm run bench` loads its TypeScript with this instead of tsx: the same esbuild transform, without tsx's keepNames.
// keepNames wraps each function made at run time in a defineProperty of its name, so every closure the runtime makes
// per action (a boundary's event, a write's body) cost a property definition that dist/'s bundles never pay:
// measured, 6 µs of a read-only action's 20. The rows must time the runtime as it ships.

const fs = require('node:fs');
const Module = require('node:module');
const { transformSync } = require('esbuild');

process.setSourceMapsEnabled(true);

function compileTs(module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    loader: 'ts',
    format: 'cjs',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: filename,
  });
  module._compile(code, filename);
}

Module._extensions['.ts'] = compileTs;
