// The packed VSIX as the Marketplace sees it: its manifest (target, icon, categories, keywords, walkthrough), its
// documents, and only what the extension runs. Run by scripts/test-vsix.mjs after packaging (LOGBOOK_VSIX, _STAGE).

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { ROOT } from '../helpers';

interface ZipEntry {
  fileName: string;
}
interface ZipFile {
  readEntry(): void;
  on(e: 'entry', f: (entry: ZipEntry) => void): void;
  on(e: 'end' | 'close', f: () => void): void;
  on(e: 'error', f: (err: Error) => void): void;
  openReadStream(entry: ZipEntry, cb: (err: Error | null, stream: NodeJS.ReadableStream) => void): void;
}
type Yauzl = { open(file: string, opts: { lazyEntries: boolean }, cb: (err: Error | null, zip: ZipFile) => void): void };
// yauzl is what @vscode/vsce reads VSIX files with.
const yauzl = createRequire(path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'package.json'))('yauzl') as Yauzl;

/** Every entry name, and the text of the few entries asked for. */
function readZip(file: string, wanted: readonly string[]): Promise<{ names: string[]; texts: Map<string, string> }> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const names: string[] = [];
      const texts = new Map<string, string>();
      zip.on('error', reject);
      zip.on('end', () => resolve({ names, texts }));
      zip.on('entry', (entry) => {
        names.push(entry.fileName);
        if (!wanted.includes(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          let text = '';
          stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
          stream.on('end', () => {
            texts.set(entry.fileName, text);
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

const vsix = process.env.LOGBOOK_VSIX ?? '';
const stageDir = process.env.LOGBOOK_VSIX_STAGE ?? '';
const target = process.env.LOGBOOK_VSIX_TARGET ?? 'linux-x64';

describe(`the packaged VSIX (${path.basename(vsix)})`, () => {
  let names: string[];
  let manifest: any;
  let vsixManifest: string;

  before(async () => {
    assert.ok(fs.existsSync(vsix), `LOGBOOK_VSIX names a packed VSIX (got ${JSON.stringify(vsix)})`);
    const z = await readZip(vsix, ['extension/package.json', 'extension.vsixmanifest']);
    names = z.names;
    manifest = JSON.parse(z.texts.get('extension/package.json') ?? '{}');
    vsixManifest = z.texts.get('extension.vsixmanifest') ?? '';
  });

  it('is built for its platform, with the Marketplace fields: icon, Debuggers category, keywords', () => {
    assert.match(vsixManifest, new RegExp(`TargetPlatform="${target}"`));
    assert.equal(manifest.icon, 'media/icon.png');
    assert.ok(names.includes('extension/media/icon.png'));
    assert.equal(
      fs
        .readFileSync(path.join(ROOT, 'media', 'icon.png'))
        .subarray(1, 4)
        .toString(),
      'PNG',
    );
    assert.ok(manifest.categories.includes('Debuggers'));
    assert.ok(manifest.keywords.length >= 5 && manifest.keywords.length <= 30, 'the Marketplace takes up to 30 keywords');
    assert.equal(manifest.license, 'MIT');
    assert.equal(manifest.private, undefined);
  });

  it('carries LICENSE, CHANGELOG and README, which the Marketplace shows', () => {
    for (const f of ['extension/LICENSE.txt', 'extension/changelog.md', 'extension/readme.md'])
      assert.ok(
        names.some((n) => n.toLowerCase() === f.toLowerCase()),
        `${f} in ${names.filter((n) => !n.includes('node_modules')).join(', ')}`,
      );
    assert.match(vsixManifest, /Microsoft\.VisualStudio\.Services\.Content\.License/);
    assert.match(vsixManifest, /Microsoft\.VisualStudio\.Services\.Content\.Changelog/);
  });

  it("contributes the walkthrough from opening an agent to killing and resuming it, with every step's media packed", () => {
    const [w] = manifest.contributes.walkthroughs;
    assert.equal(w.title, 'Get started with Agent Logbook');
    assert.deepEqual(
      w.steps.map((s: { id: string }) => s.id),
      ['openAgent', 'runIt', 'watchJournal', 'killRun', 'resumeRun'],
    );
    const commands = new Set<string>(manifest.contributes.commands.map((c: { command: string }) => c.command));
    for (const s of w.steps) {
      assert.ok(names.includes(`extension/${s.media.markdown}`), `${s.media.markdown} is packed`);
      for (const m of (s.description as string).matchAll(/\(command:([\w.]+)\)/g)) {
        const id = m[1] ?? '';
        assert.ok(commands.has(id) || id.startsWith('workbench.') || id === 'logbook.runs.focus', `step ${s.id} links ${id}, a command that exists`);
      }
    }
  });

  it('holds only what runs: bundles, media, examples, production modules and one SQLite build per Node for its platform', () => {
    const files = names.filter((n) => n.startsWith('extension/')).map((n) => n.slice('extension/'.length));
    const top = new Set(files.map((f) => (f.split('/')[0] ?? '').toLowerCase()));
    assert.deepEqual([...top].sort(), ['changelog.md', 'dist', 'examples', 'license.txt', 'media', 'node_modules', 'package.json', 'readme.md']);
    assert.deepEqual(
      files.filter((f) => /\.map$|(^|\/)src\/.*\.ts$|^test\/|\.tsbuildinfo$/.test(f) && !f.startsWith('node_modules/')),
      [],
      'no maps, sources or tests of ours',
    );
    assert.ok(!files.some((f) => f.startsWith('media/screenshots/')), 'the README screenshots stay in the repository');
    const natives = files.filter((f) => f.endsWith('.node')).sort();
    assert.deepEqual(
      natives,
      ['115', '127', '137'].map((abi) => `dist/native/node-v${abi}-${target}/better_sqlite3.node`),
    );
    assert.ok(
      files.some((f) => f.startsWith(`node_modules/@esbuild/${target}/`)),
      `esbuild's binary for ${target}`,
    );
    assert.deepEqual(
      files.filter((f) => f.startsWith('node_modules/@esbuild/') && !f.startsWith(`node_modules/@esbuild/${target}/`)),
      [],
      "no other platform's esbuild",
    );
    assert.ok(!files.includes('node_modules/esbuild/bin/esbuild'), 'no second copy of the esbuild binary');
  });

  it('is what `vsce ls` of the staged folder lists, file for file', () => {
    assert.ok(fs.existsSync(path.join(stageDir, 'package.json')), 'LOGBOOK_VSIX_STAGE names the staged folder');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce'), 'ls'], { cwd: stageDir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const listed = r.stdout.split('\n').filter(Boolean).sort();
    const packed = names
      .filter((n) => n.startsWith('extension/'))
      .map((n) => n.slice('extension/'.length))
      .filter((n) => !/^(LICENSE\.txt|changelog\.md|readme\.md)$/i.test(n))
      .sort();
    const listedComparable = listed.filter((n) => !/^(LICENSE|CHANGELOG\.md|README\.md)$/i.test(n));
    assert.deepEqual(listedComparable, packed);
  });
});
