// Reads BENCHMARKS.md back into the report it was rendered from, so a test can render it again and see hand edits.

import { strict as assert } from 'node:assert';
import { reportNotes } from './analysis';
import type { BenchReport, Build, Machine, Row, Verdict } from './report';

/** Numbers (with the unit the formatter picked for their size) and lists of them become `#`: what is left is text. */
export function maskNumbers(text: string): string {
  return text
    .replace(/(?:NaN|n\/a|[-+]?\d[\d,]*(?:\.\d+)?)(?:\s?(?:µs|ms|s|MiB|GiB|KiB|KB|MB|B|%|×|Fpg|F|S|T)(?![\p{L}\p{N}]))?/gu, '#')
    .replace(/#(?:(?:, | vs | → |[ /x-])#)+/g, '#');
}

/** µs from "43.8 µs", "2.26 ms", "1.78 s" (NaN otherwise). */
function us(text: string | undefined): number {
  const m = /([\d.,]+) (µs|ms|s)\b/.exec(text ?? '');
  if (!m) return Number.NaN;
  return Number((m[1] ?? '').replace(/,/g, '')) * ({ µs: 1, ms: 1e3, s: 1e6 } as Record<string, number>)[m[2] ?? 'µs']!;
}

function cells(line: string): string[] {
  return line
    .replace(/^\| | \|$/g, '')
    .split(/ (?<!\\)\| /)
    .map((c) => c.replace(/\\\|/g, '|'));
}

function section(md: string, heading: string): string[] {
  const start = md.indexOf(`\n## ${heading}\n`);
  if (start < 0) return [];
  const rest = md.slice(start + heading.length + 5);
  const end = rest.search(/\n## /);
  return (end < 0 ? rest : rest.slice(0, end)).split('\n');
}

/**
 * The report BENCHMARKS.md was rendered from, as far as its text shows: the machine, the baselines, every row and
 * build. Rows' raw numbers are not in the file; the notes computed from them print NaN, which masking absorbs.
 */
export function reportOf(md: string): BenchReport {
  const machine = new Map(
    section(md, 'Machine')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| |'))
      .map((l) => cells(l) as [string, string]),
  );
  const cell = (k: string): string => machine.get(k) ?? assert.fail(`the Machine table has no ${k}`);
  const cpu = /^(.*), (\d+) cores$/.exec(cell('CPU'));
  const dir = /^(.*) \((.*)\)$/.exec(cell('journal directory'));
  const load = cell('load average (start → end)')
    .split(' → ')
    .map((x) => x.split(' ').map(Number));
  const config = /^(\S+), (\d+) rounds, (\d+) s in all$/.exec(cell('configuration'));
  assert.ok(cpu && dir && config, "the Machine table has its rows in the generator's format");
  const m: Machine = {
    date: cell('date'),
    cpu: cpu[1] ?? '',
    cores: Number(cpu[2]),
    memGiB: Number(cell('memory').replace(' GiB', '')),
    os: cell('OS'),
    benchDir: dir[1] ?? '',
    filesystem: dir[2] ?? '',
    node: cell('Node'),
    sqlite: cell('SQLite').replace(' (better-sqlite3)', ''),
    loadAvgStart: load[0] ?? [],
    loadAvgEnd: load[1] ?? [],
  };
  const base = (letter: string): string => section(md, 'Baselines (same run)').find((l) => l.startsWith(`- **${letter}**`)) ?? '';
  const bold = (line: string): number[] => [...line.matchAll(/\*\*([^*]+)\*\*/g)].map((x) => us(x[1])).filter(Number.isFinite);
  const f = base('F');
  const rows: Row[] = section(md, 'Figures')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [id = '', figure = '', value = '', ratio = '', budget = '', result = '', note = ''] = cells(l);
      // Rows' raw numbers are not in the file: every key reads NaN, so the notes' sentences still render.
      const numbers = new Proxy({}, { get: () => Number.NaN, has: () => true }) as Record<string, number>;
      return {
        id: id.replace(/`/g, ''),
        section: '',
        figure,
        value,
        ratio,
        budget,
        verdict: result.replace(/\*/g, '') as Verdict,
        ...(note ? { note } : {}),
        numbers,
      };
    });
  const builds: Build[] = section(md, 'Journal builds (not part of any figure)')
    .filter((l) => /^\| \S/.test(l) && !l.startsWith('| journal |'))
    .map((l) => {
      const [what = '', time = '', detail = ''] = cells(l);
      return { what, ms: Number(time.replace(' s', '')) * 1000, detail };
    });
  const F = bold(f)[0] ?? Number.NaN;
  const [bFull = Number.NaN, bGroup = Number.NaN] = bold(base('B'));
  const baselines = {
    fUs: F,
    fRoundsUs: (/per round: ([^)]*)\)/.exec(f)?.[1] ?? '').split(', ').map(us),
    sUs: bold(base('S'))[0] ?? Number.NaN,
    tUs: bold(base('T'))[0] ?? Number.NaN,
    bFullUs: bFull,
    bGroupUs: bGroup,
    plainUs: bold(base('plain call'))[0] ?? Number.NaN,
    plainCpuUs: us(/wall, ([^ ]+ µs) CPU/.exec(base('plain call'))?.[1]),
  };
  // WAL pages per action are counted by strace and shown in the action rows' notes.
  const pages = Object.fromEntries(
    (['full', 'group', 'readOnly'] as const).flatMap((k) => {
      const p = /~(\d+) WAL pages/.exec(rows.find((r) => r.id === `action.${k}`)?.note ?? '')?.[1];
      return p === undefined ? [] : [[k, Number(p)]];
    }),
  );
  return {
    config: config[1] ?? '',
    machine: m,
    rounds: Number(config[2]),
    baselines,
    rows,
    builds,
    notes: reportNotes({ F, S: baselines.sUs, T: baselines.tUs, rows, pages, cores: m.cores }),
    durationS: Number(config[3]),
  };
}
