// Fails (exit 1) when the TypeScript sources import each other in a cycle, type-only and lazy imports included.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SPECIFIER = /(?:^|[\s;])(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function resolveImport(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec.replace(/\.js$/, ''));
  for (const c of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (existsSync(c)) return c;
  return undefined;
}

/** Every import cycle among the .ts files under `root`, each as the list of files around it (the first repeated last). */
export function findCycles(root) {
  const graph = new Map();
  for (const file of sources(root)) {
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    const deps = new Set();
    for (const m of text.matchAll(SPECIFIER)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3]);
      if (target) deps.add(target);
    }
    graph.set(file, [...deps]);
  }
  // Depth-first search with colours: a grey node met again closes a cycle.
  const colour = new Map();
  const stack = [];
  const cycles = [];
  const seen = new Set();
  const visit = (node) => {
    colour.set(node, 'grey');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (colour.get(next) === 'grey') {
        const cycle = [...stack.slice(stack.indexOf(next)), next].map((f) => relative(root, f));
        const key = [...cycle.slice(0, -1)].sort().join('|');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (!colour.has(next)) visit(next);
    }
    stack.pop();
    colour.set(node, 'black');
  };
  for (const node of graph.keys()) if (!colour.has(node)) visit(node);
  return cycles;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src'));
  const cycles = findCycles(root);
  for (const c of cycles) console.error(`import cycle: ${c.join(' → ')}`);
  if (cycles.length) {
    console.error(`${cycles.length} import cycle(s) under ${root}: move what both sides need into a module both import.`);
    process.exit(1);
  }
  console.log(`no import cycles under ${root}`);
}
