// The bundles in dist/ (as `npm run build` writes them) carry zod/mini, never full zod: it cost ~70 ms of every process start.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { ROOT } from '../helpers';

/** Every bundle scripts/build.mjs writes. */
const BUNDLES = ['cli.js', 'runtime.js', 'ai.js', 'debugAdapter.js', 'runner.js', 'extension.js', 'readerMain.js', 'campaignChild.js'];

/**
 * Full zod's classic API names its object class "ZodObject" (the name `instanceof z.ZodObject` tests); zod/mini calls
 * its own "ZodMiniObject" and the shared core "$ZodObject", so the quoted name is in a bundle only if the classic API
 * is. It is a string, so it would survive minification too.
 */
const CLASSIC = '"ZodObject"';

/**
 * zod/mini plus the core it uses and the English locale is 35-60 KB of a bundle; full zod, or `import { z } from
 * 'zod/mini'` (its namespace object keeps the whole core and every locale), is over 600 KB.
 */
const MAX_ZOD_BYTES = 150_000;

/** Bytes from zod's files, counted by the `// <path>` comment esbuild writes before each module of an unminified bundle. */
function zodBytes(text: string): number {
  const starts = [...text.matchAll(/^\/\/ (\S+)$/gm)].map((m) => ({ at: m.index, file: m[1] ?? '' }));
  let total = 0;
  starts.forEach((s, i) => {
    if (/(^|\/)node_modules\/zod\//.test(s.file)) total += (starts[i + 1]?.at ?? text.length) - s.at;
  });
  return total;
}

function bundle(source: string): string {
  const out = esbuild.buildSync({
    stdin: { contents: source, resolveDir: ROOT },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]?.text ?? '';
}

describe('bundles in dist/', () => {
  it('the checks tell full zod from zod/mini', () => {
    const full = bundle("import { z } from 'zod'; console.log(z.object({}));");
    const mini = bundle("import * as z from 'zod/mini'; console.log(z.object({}));");
    assert.ok(full.includes(CLASSIC), `full zod no longer contains ${CLASSIC}: pick another marker`);
    assert.ok(zodBytes(full) > MAX_ZOD_BYTES);
    assert.ok(!mini.includes(CLASSIC));
    assert.ok(zodBytes(mini) > 0 && zodBytes(mini) < MAX_ZOD_BYTES);
  });

  for (const name of BUNDLES) {
    it(`${name} has no full zod`, () => {
      const file = path.join(ROOT, 'dist', name);
      assert.ok(fs.existsSync(file), `${file} is missing: run \`npm run build\` first`);
      const text = fs.readFileSync(file, 'utf8');
      assert.match(text, /^\/\/ src\//m, 'the bundle has no module path comments (minified?), which the size check reads');
      assert.ok(!text.includes(CLASSIC), `${name} bundles full zod's classic API: import zod/mini in src/, as \`import * as z from 'zod/mini'\``);
      const bytes = zodBytes(text);
      assert.ok(bytes < MAX_ZOD_BYTES, `${name} holds ${bytes} bytes of zod: import zod/mini as a namespace (\`import * as z\`), not \`{ z }\``);
    });
  }
});
