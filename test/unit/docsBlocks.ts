// The fenced code blocks of the docs, and what a test can do with each: type-check it, check its commands, or skip it as marked.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { parseCrashSpec } from '../../src/runtime/faults';

export const ROOT = path.join(__dirname, '..', '..');

export interface Block {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The info string after the fence, e.g. `ts`, `ts fragment`, `sh`, or ''. */
  readonly info: string;
  readonly body: string;
  /** `<!-- not-run: reason -->` on the line before the fence: the reason. */
  readonly notRun?: string;
  /** `<!-- file: welcome.ts -->` on the line before the fence: the name other blocks import it by. */
  readonly name?: string;
}

/** How a block is checked. Unmarked blocks no check fits are `unrunnable`: the test fails on them. */
export type Plan =
  | { readonly kind: 'typecheck' }
  | { readonly kind: 'commands'; readonly transcript: boolean }
  | { readonly kind: 'skipped'; readonly why: string }
  | { readonly kind: 'unrunnable'; readonly why: string };

/** Every fenced block of a Markdown text (indented ones in lists too), with the marker comment before it. */
export function blocksOf(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1] ?? '';
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j] ?? '')) j++;
    const body = lines
      .slice(i + 1, j)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join('\n');
    const before = (lines[i - 1] ?? '').trim();
    const notRun = /^<!-- not-run: (.+) -->$/.exec(before)?.[1];
    const name = /^<!-- file: (\S+) -->$/.exec(before)?.[1];
    out.push({ file, line: i + 1, info: (open[2] ?? '').trim(), body, ...(notRun ? { notRun } : {}), ...(name ? { name } : {}) });
    i = j;
  }
  return out;
}

export function planOf(b: Block): Plan {
  if (b.notRun) return { kind: 'skipped', why: b.notRun };
  const [lang = '', ...attrs] = b.info.split(/\s+/);
  if (lang === 'ts' || lang === 'typescript') return attrs.includes('fragment') ? { kind: 'skipped', why: 'a TypeScript fragment' } : { kind: 'typecheck' };
  if (lang === 'sh' || lang === 'bash' || lang === 'shell') return { kind: 'commands', transcript: false };
  if (lang === 'console') return { kind: 'commands', transcript: true };
  // An unlabelled block whose commands are `$ ` lines is a terminal transcript: the rest is what they printed.
  if (lang === '' && /^\$ /m.test(b.body)) return { kind: 'commands', transcript: true };
  return {
    kind: 'unrunnable',
    why: `a \`\`\`${b.info} block no check runs: give it a language a check runs (ts, sh, console), or mark it (\`\`\`ts fragment, or <!-- not-run: why --> on the line before)`,
  };
}

/** Shell words of a command line, quotes removed; operators (`&&`, `|`, `;`, `&`) are words of their own. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      cur = (cur ?? '') + line.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? line.length : end;
    } else if (c === '\\') {
      cur = (cur ?? '') + (line[i + 1] ?? '');
      i++;
    } else if (/\s/.test(c)) {
      if (cur !== undefined) words.push(cur);
      cur = undefined;
    } else if (c === '#' && cur === undefined) {
      break;
    } else if (/[|&;]/.test(c)) {
      if (cur !== undefined) words.push(cur);
      cur = undefined;
      const two = line.slice(i, i + 2);
      words.push(two === '&&' || two === '||' ? two : c);
      if (two === '&&' || two === '||') i++;
    } else {
      cur = (cur ?? '') + c;
    }
  }
  if (cur !== undefined) words.push(cur);
  return words;
}

/** The commands of a block: `$ ` lines of a transcript, every line of a script (continuations joined). */
export function commandsOf(body: string, transcript: boolean): string[][] {
  const lines = transcript
    ? body
        .split('\n')
        .filter((l) => l.startsWith('$ '))
        .map((l) => l.slice(2))
    : body.replace(/\\\n/g, ' ').split('\n');
  const out: string[][] = [];
  for (const line of lines) {
    let cmd: string[] = [];
    for (const w of shellWords(line)) {
      if (['&&', '||', '|', ';', '&'].includes(w)) {
        if (cmd.length) out.push(cmd);
        cmd = [];
      } else cmd.push(w);
    }
    if (cmd.length) out.push(cmd);
  }
  return out;
}

/** Each CLI command's options, from its usage lines (`logbook --help`), plus those every command takes. */
export function cliOptions(usage: string): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const line of usage.split('\n')) {
    const cmd = /^ {2}logbook ([a-z-]+)/.exec(line)?.[1];
    if (!cmd) continue;
    const set = m.get(cmd) ?? new Set(['--journal', '--json', '--help', '-h']);
    for (const f of line.matchAll(/--[a-z][a-z-]*/g)) set.add(f[0]);
    m.set(cmd, set);
  }
  return m;
}

/** What is wrong with one command of a block: a `logbook` command or option the CLI lacks, an npm script or file that does not exist. */
export function commandProblems(words: readonly string[], cli: ReadonlyMap<string, ReadonlySet<string>>, scripts: ReadonlySet<string>): string[] {
  let w = [...words];
  while (w[0] !== undefined && /^[A-Z_][A-Z0-9_]*=/.test(w[0])) w = w.slice(1);
  if (w[0] === 'npx') w = w.slice(1);
  const [head, ...args] = w;
  if (head === 'logbook') {
    const [cmd = '', ...rest] = args;
    const options = cli.get(cmd);
    if (!options) return [`logbook ${cmd}: no such command (logbook --help lists ${[...cli.keys()].join(', ')})`];
    const end = rest.indexOf('--');
    const own = end < 0 ? rest : rest.slice(0, end);
    const problems: string[] = [];
    for (const [i, a] of own.entries()) {
      if (!a.startsWith('-')) {
        // A file of this repository the docs send the reader to (the examples, a script) exists.
        if (/^(examples|scripts)(\/|$)/.test(a) && !fs.existsSync(path.join(ROOT, a))) problems.push(`logbook ${cmd}: no file ${a} in the repository`);
        continue;
      }
      const [name = a, inline] = a.split(/=(.*)/s);
      if (!options.has(name)) {
        problems.push(`logbook ${cmd}: no option ${name} (its usage: ${[...options].join(' ')})`);
        continue;
      }
      const value = inline ?? own[i + 1] ?? '';
      const bad = valueProblem(name, value);
      if (bad) problems.push(`logbook ${cmd}: ${name} ${value}: ${bad}`);
    }
    return problems;
  }
  if (head === 'npm' && args[0] === 'run') return args[1] === undefined || scripts.has(args[1]) ? [] : [`npm run ${args[1]}: package.json has no such script`];
  if (head === 'node' && args[0] !== undefined && /^scripts\//.test(args[0]))
    return fs.existsSync(path.join(ROOT, args[0])) ? [] : [`node ${args[0]}: no such file`];
  return [];
}

/** What the CLI would refuse in an option's value, for the options whose values have a syntax of their own. */
function valueProblem(name: string, value: string): string | undefined {
  try {
    if (name === '--input') JSON.parse(value);
    else if (name === '--crash-at') parseCrashSpec(value);
    else if (name === '--decide' && !/^.+=(happened|not-happened)$/.test(value)) return 'not <action-id>=happened|not-happened';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return undefined;
}

/** Problems of a shell block as bash reads it (syntax only: nothing runs). */
export function shellSyntax(body: string): string[] {
  const r = spawnSync('bash', ['-n'], { input: body, encoding: 'utf8' });
  return r.status === 0 ? [] : [`bash -n: ${r.stderr.trim()}`];
}

/**
 * Type-checks TypeScript blocks as files of a consumer's project: `agent-logbook` and `agent-logbook/ai` are the
 * package's built declarations (dist/types), other packages the repository's node_modules, ES modules (top-level
 * await). A block named by `<!-- file: x.ts -->` is written as x.ts, so another can import it as './x.js'.
 * Returns the diagnostics by block.
 */
export function typecheck(blocks: readonly Block[], dir: string): Map<Block, string[]> {
  const types = path.join(ROOT, 'dist', 'types');
  if (!fs.existsSync(path.join(types, 'runtime', 'public.d.ts')))
    throw new Error('dist/types is missing: run `npm run build` (the docs are checked against the declarations the package ships)');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'docs-blocks', type: 'module' }));
  // node_modules of the repository, so zod and ai resolve as in a project that installed them.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const files = new Map<string, Block>();
  for (const [i, b] of blocks.entries()) {
    const file = path.join(dir, b.name ?? `block-${i}-${path.basename(b.file, '.md')}-${b.line}.ts`);
    fs.writeFileSync(file, b.body);
    files.set(file, b);
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    paths: {
      'agent-logbook': [path.join(types, 'runtime', 'public.d.ts')],
      'agent-logbook/ai': [path.join(types, 'ai', 'index.d.ts')],
      // What an ES module gets through the `import` condition: the declarations' ESM twins.
      'agent-logbook/langgraph': [path.join(types, 'langgraph', 'index.d.mts')],
    },
  };
  const program = ts.createProgram([...files.keys()], options);
  const out = new Map<Block, string[]>([...files.values()].map((b) => [b, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const b = d.file ? files.get(path.resolve(d.file.fileName)) : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const where = d.file && d.start !== undefined ? `line ${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    if (b) out.get(b)?.push(`${where}TS${d.code} ${text}`);
    else for (const list of out.values()) list.push(`TS${d.code} ${text}`);
  }
  return out;
}

/** Every Markdown file whose blocks are checked: README.md and docs/*.md (the generated API reference has none). */
export function docFiles(): string[] {
  return [
    'README.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}
