// The rehearsal as JUnit XML for CI: one test case per kill point, a failure with the invariants and how to reproduce.

import * as os from 'node:os';
import * as path from 'node:path';
import { broken } from './invariants';
import { invariantsBroken, type RehearsalReport } from './report';
import type { CampaignResult } from './reportSchema';

/** XML 1.0 forbids most control characters even escaped: a stray one in an error message would void the file. */
function text(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** An attribute value: also its quote, and line breaks kept as characters (a parser would fold them into spaces). */
function xml(s: string): string {
  return text(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

const secs = (ms: number): string => (ms / 1000).toFixed(3);

/** POSIX shell quoting: a word that needs none stays as it is, so the command reads as a person would type it. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-][\w@%+=:,./#-]*$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A fresh journal per point, beside which the providers' state goes too (defaultStateDir): nothing of another run. */
export function reproJournal(c: CampaignResult): string {
  const slug = c.point.spec.replace(/[^\w.-]+/g, '_').slice(0, 80);
  return path.join('.logbook', 'repro', `${String(c.index + 1).padStart(4, '0')}-${slug}`, 'journal.db');
}

/** The commands that replay one campaign by hand, as written for a shell in the working directory of the rehearsal. */
export function reproduction(c: CampaignResult, script: string, cwd = process.cwd()): string[] {
  const db = reproJournal(c);
  const rel = path.relative(cwd, script);
  const shown = !rel || rel.startsWith('..') || path.isAbsolute(rel) ? script : rel;
  return c.commands.map((argv) => ['logbook', ...argv.map((a) => (a === script ? shown : a)), '--journal', db].map(shellWord).join(' '));
}

function testcase(r: RehearsalReport, c: CampaignResult): string {
  const p = c.point.point;
  const kind = p.startsWith('step:')
    ? 'step'
    : p.startsWith('compensate:')
      ? 'inverse'
      : p.startsWith('event:')
        ? 'event'
        : p.startsWith('sleep:')
          ? 'sleep'
          : 'action';
  const name = c.point.process > 1 ? `${c.point.spec} (process ${c.point.process})` : c.point.spec;
  const head = `    <testcase name="${xml(name)}" classname="${xml(`${r.agent}.${kind}.${c.point.target}`)}" time="${secs(c.ms)}"`;
  if (!broken(c)) return `${head}/>`;
  const found = invariantsBroken(c);
  const body = [
    ...found.map((f) => `- ${f}`),
    '',
    'Reproduce (a real SIGKILL at this point, then what the rehearsal did after it):',
    ...reproduction(c, r.script).map((l) => `  ${l}`),
  ].join('\n');
  return `${head}>\n      <failure message="${xml(found[0] ?? 'an invariant broke')}" type="${xml(c.error ? 'campaign-error' : 'invariant')}">${text(body)}</failure>\n    </testcase>`;
}

function properties(r: Pick<RehearsalReport, 'script' | 'input'> & Partial<RehearsalReport>): string {
  const props: Array<[string, string]> = [
    ['script', r.script],
    ['input', JSON.stringify(r.input ?? {})],
  ];
  if (r.selection)
    props.push(
      ['points', r.selection.mode === 'all' ? 'all' : `random ${r.selection.requested ?? ''} seed ${r.selection.seed}`],
      ['available', String(r.selection.available)],
    );
  if (r.depth !== undefined) props.push(['depth', String(r.depth)]);
  return `    <properties>\n${props.map(([k, v]) => `      <property name="${xml(k)}" value="${xml(v)}"/>`).join('\n')}\n    </properties>`;
}

function document(suite: { name: string; tests: number; failures: number; errors: number; ms: number }, inner: string[]): string {
  const counts = `tests="${suite.tests}" failures="${suite.failures}" errors="${suite.errors}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="logbook rehearse" ${counts} time="${secs(suite.ms)}">`,
    `  <testsuite name="${xml(suite.name)}" ${counts} skipped="0" time="${secs(suite.ms)}" timestamp="${new Date().toISOString().slice(0, 19)}" hostname="${xml(os.hostname())}">`,
    ...inner,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

export function junitReport(r: RehearsalReport): string {
  const failures = r.campaigns.filter(broken).length;
  return document({ name: `rehearse ${r.agent}`, tests: r.campaigns.length, failures, errors: 0, ms: r.ms }, [
    properties(r),
    ...r.campaigns.map((c) => testcase(r, c)),
  ]);
}

/** An uncrashed run that did not complete: one test case, in error, so CI shows why nothing was rehearsed. */
export function junitBaselineFailed(f: { script: string; agent: string; input: unknown; message: string; ms: number }): string {
  const tc = `    <testcase name="uncrashed run" classname="${xml(`${f.agent}.baseline`)}" time="${secs(f.ms)}">\n      <error message="${xml(f.message)}" type="baseline">${text(f.message)}</error>\n    </testcase>`;
  return document({ name: `rehearse ${f.agent}`, tests: 1, failures: 0, errors: 1, ms: f.ms }, [properties(f), tc]);
}
