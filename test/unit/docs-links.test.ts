// Every relative link in README.md and docs/ points at a file of the repository, and every #anchor at a heading.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(
      (m[1] ?? '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return out;
}

/** Links outside code blocks and code spans, where a reader can click them. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z]+:/.test(l));
}

describe('README and docs: links', () => {
  const files = [
    'README.md',
    'SECURITY.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  for (const file of files) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const broken: string[] = [];
      for (const link of linksOf(text)) {
        const [target = '', anchor] = link.split('#');
        const resolved = target === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), target);
        if (!fs.existsSync(resolved)) broken.push(`${link} (no file ${path.relative(ROOT, resolved)})`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor))
          broken.push(`${link} (no heading #${anchor})`);
      }
      assert.deepEqual(broken, [], `${file} has broken links`);
    });
  }
  it('finds a broken link (negative control)', () => {
    assert.deepEqual(linksOf('see [x](docs/nope.md#a) and `[y](z)`'), ['docs/nope.md#a']);
    assert.ok(!anchorsOf('## The CLI').has('the-cli-'));
  });
});
