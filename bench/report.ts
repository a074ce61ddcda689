// The bench's results: rows with figures, ratios, budgets and verdicts; printed as a table and written as Markdown.

import { spawnSync } from 'node:child_process';
import * as os from 'node:os';

export type Verdict = 'PASS' | 'FAIL' | 'info' | 'not built' | 'error';

export interface Row {
  readonly id: string;
  readonly section: string;
  readonly figure: string;
  /** The figure as people read it (median of rounds), or why there is none. */
  readonly value: string;
  /** The figure against a baseline measured in the same run, e.g. "4.12 F" or "1.05× CLI". */
  readonly ratio: string;
  readonly budget: string;
  readonly verdict: Verdict;
  readonly note?: string;
  /** Raw numbers for machines (µs unless the key says otherwise). */
  readonly numbers?: Record<string, number>;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memGiB: number;
  readonly node: string;
  readonly sqlite: string;
  readonly os: string;
  readonly filesystem: string;
  readonly benchDir: string;
  readonly date: string;
  readonly loadAvgStart: readonly number[];
  loadAvgEnd?: readonly number[];
}

export interface Build {
  readonly what: string;
  readonly ms: number;
  readonly detail: string;
}

export interface BenchReport {
  readonly config: string;
  readonly machine: Machine;
  readonly rounds: number;
  readonly baselines: {
    readonly fUs: number;
    readonly fRoundsUs: readonly number[];
    readonly sUs: number;
    readonly tUs: number;
    readonly bFullUs: number;
    readonly bGroupUs: number;
    readonly plainUs: number;
    readonly plainCpuUs: number;
  };
  readonly rows: Row[];
  readonly builds: Build[];
  readonly notes: string[];
  durationS: number;
}

export function machineInfo(dir: string, sqlite: string): Machine {
  const cpus = os.cpus();
  const df = spawnSync('df', ['-PT', dir], { encoding: 'utf8' });
  const fsLine = df.status === 0 ? (df.stdout.trim().split('\n')[1] ?? '') : '';
  const cols = fsLine.split(/\s+/);
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    sqlite,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    filesystem: cols.length > 1 ? `${cols[1]} on ${cols[0]}` : 'unknown',
    benchDir: dir,
    date: new Date().toISOString(),
    loadAvgStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** PASS/FAIL for `value ≤ limit`, with how far off a miss is. */
export function judge(value: number, limit: number): { verdict: Verdict; miss?: string } {
  if (!Number.isFinite(value)) return { verdict: 'error', miss: 'no figure' };
  if (value <= limit) return { verdict: 'PASS' };
  return { verdict: 'FAIL', miss: `${Math.round((value / limit - 1) * 100)}% over budget` };
}

export function notBuilt(id: string, section: string, figure: string, budget: string, note: string): Row {
  return { id, section, figure, value: 'not built', ratio: '—', budget, verdict: 'not built', note };
}

export function errorRow(id: string, section: string, figure: string, budget: string, err: unknown): Row {
  const msg = err instanceof Error ? err.message : String(err);
  return { id, section, figure, value: 'error', ratio: '—', budget, verdict: 'error', note: msg.replace(/\s+/g, ' ').slice(0, 300) };
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** The console table: one line per row, notes under FAIL and error rows. */
export function formatTable(rows: readonly Row[]): string {
  const w = { figure: 58, value: 14, ratio: 16, budget: 26 };
  const lines = [`${pad('figure', w.figure)} ${pad('median', w.value)} ${pad('ratio', w.ratio)} ${pad('budget', w.budget)} result`];
  lines.push('-'.repeat(w.figure + w.value + w.ratio + w.budget + 10));
  let section = '';
  for (const r of rows) {
    if (r.section !== section) {
      section = r.section;
      lines.push(`[${section}]`);
    }
    lines.push(`${pad(r.figure, w.figure)} ${pad(r.value, w.value)} ${pad(r.ratio, w.ratio)} ${pad(r.budget, w.budget)} ${r.verdict}`);
    if (r.note && (r.verdict === 'FAIL' || r.verdict === 'error')) lines.push(`    ↳ ${r.note}`);
  }
  return lines.join('\n');
}

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** BENCHMARKS.md: the latest figures, the machine they come from, and how they were measured. */
export function formatMarkdown(rep: BenchReport, analysis: readonly string[]): string {
  const m = rep.machine;
  const out: string[] = [];
  out.push('# Benchmarks');
  out.push('');
  out.push('Written by `npm run bench` (`bench/run.ts`); do not edit by hand. Every figure is the median of');
  out.push(`${rep.rounds} interleaved rounds and is set against baselines measured in the same run, because absolute`);
  out.push('times on shared machines move 2× between minutes. `npm run bench -- --check` exits non-zero when a built row');
  out.push('misses its budget; `npm run bench -- --peers` adds the LangGraph.js comparison.');
  out.push('');
  out.push('## Machine');
  out.push('');
  out.push('| | |');
  out.push('|---|---|');
  out.push(`| date | ${m.date} |`);
  out.push(`| CPU | ${mdCell(m.cpu)}, ${m.cores} cores |`);
  out.push(`| memory | ${m.memGiB} GiB |`);
  out.push(`| OS | ${mdCell(m.os)} |`);
  out.push(`| journal directory | ${mdCell(m.benchDir)} (${mdCell(m.filesystem)}) |`);
  out.push(`| Node | ${m.node} |`);
  out.push(`| SQLite | ${m.sqlite} (better-sqlite3) |`);
  out.push(`| load average (start → end) | ${m.loadAvgStart.join(' ')} → ${(m.loadAvgEnd ?? []).join(' ')} |`);
  out.push(`| configuration | ${rep.config}, ${rep.rounds} rounds, ${Math.round(rep.durationS)} s in all |`);
  out.push('');
  out.push('## Baselines (same run)');
  out.push('');
  out.push(
    `- **F**, the fsync floor: overwrite 4 KiB in place + \`fsync\`, in the journal's directory: **${fmt(rep.baselines.fUs)}** (median; per round: ${rep.baselines.fRoundsUs.map(fmt).join(', ')}).`,
  );
  out.push(
    `- **S**, SQLite's durable commit: one small row in its own immediate transaction, WAL (cycled, as in a long run), \`synchronous=FULL\`, same directory: **${fmt(rep.baselines.sUs)}** (${(rep.baselines.sUs / rep.baselines.fUs).toFixed(2)} F).`,
  );
  out.push(`- **T**, S's commit at \`synchronous=NORMAL\` (no fsync): **${fmt(rep.baselines.tUs)}**.`);
  out.push(
    `- **B**, the action bracket's two transactions (started; the call's count with committed) in raw SQL on the journal's own schema, as format 2 writes them (each event carrying its writes; a lazy fold of them into the rows every 16 brackets), with the engine's run id, keys, args and results byte for byte, no Logbook code: **${fmt(rep.baselines.bFullUs)}** (${(rep.baselines.bFullUs / rep.baselines.fUs).toFixed(2)} F) with two durable, **${fmt(rep.baselines.bGroupUs)}** (${(rep.baselines.bGroupUs / rep.baselines.fUs).toFixed(2)} F) with one (group commit).`,
  );
  out.push(
    `- **plain call**: the same effect as an awaited function call, no Logbook: **${fmt(rep.baselines.plainUs)}** wall, ${fmt(rep.baselines.plainCpuUs)} CPU (reading the CPU clock, a getrusage call, is most of that; it cancels out in the overheads, which subtract this).`,
  );
  out.push('');
  out.push('## Figures');
  out.push('');
  out.push('| id | figure | median | ratio | budget | result | note |');
  out.push('|---|---|---|---|---|---|---|');
  for (const r of rep.rows) {
    out.push(
      `| \`${r.id}\` | ${mdCell(r.figure)} | ${mdCell(r.value)} | ${mdCell(r.ratio)} | ${mdCell(r.budget)} | ${r.verdict === 'PASS' ? 'PASS' : r.verdict === 'FAIL' ? '**FAIL**' : r.verdict} | ${mdCell(r.note ?? '')} |`,
    );
  }
  out.push('');
  if (rep.builds.length > 0) {
    out.push('## Journal builds (not part of any figure)');
    out.push('');
    out.push('The resume and replay rows need journals of up to a million actions. They are written synthetically, in bulk SQL,');
    out.push('row for row and event for event what the engine writes for the same agent (`bench/journalBuilder.ts`; the smoke');
    out.push('test checks it against a journal the engine wrote itself), and every resume verifies that no journaled effect ran again.');
    out.push('');
    out.push('| journal | build time | detail |');
    out.push('|---|---|---|');
    for (const b of rep.builds) out.push(`| ${mdCell(b.what)} | ${(b.ms / 1000).toFixed(1)} s | ${mdCell(b.detail)} |`);
    out.push('');
  }
  if (analysis.length > 0 || rep.notes.length > 0) {
    out.push('## Notes');
    out.push('');
    for (const n of [...rep.notes, ...analysis]) out.push(`- ${n}`);
    out.push('');
  }
  const missed = rep.rows.filter((r) => r.verdict === 'FAIL').length;
  const built = rep.rows.filter((r) => r.verdict === 'PASS' || r.verdict === 'FAIL').length;
  out.push(
    `${built - missed} of ${built} budgeted rows that are built here meet their budget${missed ? `; ${missed} do not (see Notes for by how much and why)` : ''}.`,
  );
  out.push('');
  return `${out.join('\n')}\n`;
}

function fmt(us: number): string {
  if (!Number.isFinite(us)) return 'n/a';
  return us < 1000 ? `${us.toFixed(1)} µs` : `${(us / 1000).toFixed(2)} ms`;
}
