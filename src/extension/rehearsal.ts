// Rehearsal in the Test Explorer: each agent file a test, each kill point a child; runs `logbook rehearse` on the configured Node.

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RehearsalCampaign, RehearsalEvent, RehearsalPoint as Point } from '../shared/rehearsalEvents';
import { readConfig, settingsEnv, type LogbookConfig } from './config';
import { DEBUG_TYPE, SETTINGS } from './ids';
import type { Log } from './log';
import type { ExtensionPaths } from './paths';
import { agentLines, findAction, findStep, indexSource } from './sourceIndex';

export const CONTROLLER_ID = 'logbook.rehearsal';
const AGENT_GLOB = '**/*.{ts,mts,cts,js,mjs,cjs}';
const EXCLUDE = '{**/node_modules/**,**/dist/**,**/out/**,**/.logbook/**,**/*.d.ts}';
const MAX_FILE = 2_000_000;
/** After SIGINT (the rehearsal removes its scratch files), what is still alive gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** The `logbook.rehearse` setting. */
export interface RehearseSetting {
  readonly input?: unknown;
  readonly points: 'all' | 'random';
  readonly random: number;
  readonly seed: string;
  readonly jobs: number;
}

export function readRehearseSetting(): RehearseSetting {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const raw = vscode.workspace.getConfiguration(SETTINGS.section, folder?.uri ?? null).get<Record<string, unknown>>(SETTINGS.rehearse) ?? {};
  const int = (v: unknown, d: number): number => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d);
  return {
    ...(raw.input !== undefined ? { input: raw.input } : {}),
    points: raw.points === 'random' ? 'random' : 'all',
    random: Math.max(1, int(raw.random, 10)),
    seed: typeof raw.seed === 'string' ? raw.seed : '',
    jobs: int(raw.jobs, 0),
  };
}

/** One outcome the controller gave an item: what the tests read (the Testing API has no reader of results). */
export interface ItemOutcome {
  readonly id: string;
  readonly state: 'enqueued' | 'started' | 'passed' | 'failed' | 'errored' | 'skipped';
  readonly messages: Array<{ text: string; line: number | undefined; file: string | undefined }>;
}

/** What one rehearsal process is doing, for cancel and for tests that check none is left. */
export interface ActiveRehearsal {
  readonly file: string;
  readonly pid: number | undefined;
  readonly done: Promise<void>;
}

type Mode = { kind: 'all' } | { kind: 'random'; n: number; seed: string } | { kind: 'points'; specs: string[] };

export function pointId(file: string, p: Pick<Point, 'spec' | 'process'>): string {
  return `${vscode.Uri.file(file).toString()}#${p.process}#${p.spec}`;
}

const PHASE_WORDS: Record<string, string> = {
  'step:before': 'before the step',
  'step:after-checkpoint': 'after its checkpoint',
  'action:before-start': 'before start',
  'action:after-start': 'after start',
  'action:after-execute': 'after execute',
  'action:after-execute-throw': 'execute throws after its effect',
  'action:after-commit': 'after commit',
  'compensate:after-start': 'inverse after start',
  'compensate:after-execute': 'inverse after execute',
};

/** Where a point's run.do / run.step call is in the agent's text (the line of the first call of that type or name). */
export function pointLine(text: string, p: Point): number | undefined {
  const index = indexSource(text);
  return p.point.startsWith('step:') ? findStep(index, p.target)?.line : findAction(index, p.target)?.line;
}

export class Rehearsals implements vscode.Disposable {
  readonly controller: vscode.TestController;
  readonly allProfile: vscode.TestRunProfile;
  readonly randomProfile: vscode.TestRunProfile;
  readonly debugProfile: vscode.TestRunProfile;
  readonly outcomes = new Map<string, ItemOutcome>();
  readonly active = new Set<ActiveRehearsal>();
  /** Failing points of the last rehearsal of each file: line → messages (the editor decorates them). */
  readonly failing = new Map<string, Map<number, string[]>>();
  private readonly points = new Map<string, Point>();
  private readonly subs: vscode.Disposable[] = [];
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('testing.message.error.lineBackground'),
    overviewRulerColor: new vscode.ThemeColor('testing.iconFailed'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private discovered: Promise<void> | undefined;

  constructor(
    private readonly paths: ExtensionPaths,
    private readonly log: Log,
    private readonly startDebug: (point: Point, file: string, input: unknown) => Promise<boolean>,
  ) {
    this.controller = vscode.tests.createTestController(CONTROLLER_ID, 'Agent Logbook rehearsal');
    this.controller.resolveHandler = async (item) => {
      if (!item) return this.discover();
      if (item.uri && !item.parent) await this.list(item);
    };
    this.controller.refreshHandler = async () => {
      this.discovered = undefined;
      await this.discover();
    };
    this.allProfile = this.controller.createRunProfile('All points', vscode.TestRunProfileKind.Run, (r, t) => this.run(r, t, { kind: 'all' }), true);
    this.randomProfile = this.controller.createRunProfile('Random sample', vscode.TestRunProfileKind.Run, (r, t) => {
      const s = readRehearseSetting();
      return this.run(r, t, { kind: 'random', n: s.random, seed: s.seed || String(Date.now()) });
    });
    this.debugProfile = this.controller.createRunProfile('Debug the crash and the resume', vscode.TestRunProfileKind.Debug, (r, t) => this.debug(r, t), true);
    const watcher = vscode.workspace.createFileSystemWatcher(AGENT_GLOB);
    this.subs.push(
      this.controller,
      this.decoration,
      watcher,
      watcher.onDidCreate((u) => this.consider(u)),
      watcher.onDidChange((u) => this.consider(u)),
      watcher.onDidDelete((u) => this.controller.items.delete(u.toString())),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
    );
  }

  /** Finds the workspace's agent files (a `defineAgent(` call) once; the watcher keeps the list current. */
  discover(): Promise<void> {
    this.discovered ??= (async () => {
      const files = await vscode.workspace.findFiles(AGENT_GLOB, EXCLUDE);
      for (const u of files) this.consider(u);
    })();
    return this.discovered;
  }

  private consider(uri: vscode.Uri): void {
    if (uri.scheme !== 'file' || /[\\/](node_modules|\.logbook)[\\/]/.test(uri.fsPath) || uri.fsPath.endsWith('.d.ts')) return;
    let text: string;
    try {
      if (fs.statSync(uri.fsPath).size > MAX_FILE) return;
      text = fs.readFileSync(uri.fsPath, 'utf8');
    } catch {
      this.controller.items.delete(uri.toString());
      return;
    }
    const [line] = agentLines(text);
    if (line === undefined) {
      this.controller.items.delete(uri.toString());
      return;
    }
    const existing = this.controller.items.get(uri.toString());
    const item = existing ?? this.controller.createTestItem(uri.toString(), path.basename(uri.fsPath), uri);
    item.range = new vscode.Range(line, 0, line, 0);
    const root = vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath;
    item.description = root ? path.relative(root, path.dirname(uri.fsPath)) || undefined : undefined;
    item.canResolveChildren = true;
    if (!existing) this.controller.items.add(item);
    // Its points may have moved: place the known ones again.
    item.children.forEach((child) => {
      const p = this.points.get(child.id);
      const l = p && pointLine(text, p);
      if (l !== undefined) child.range = new vscode.Range(l, 0, l, 0);
    });
  }

  /** The agent item of a file, found (or made) now: the CodeLens and tests start from a file. */
  async itemFor(file: string): Promise<vscode.TestItem | undefined> {
    await this.discover();
    const uri = vscode.Uri.file(file);
    if (!this.controller.items.get(uri.toString())) this.consider(uri);
    return this.controller.items.get(uri.toString());
  }

  /** The kill points of an agent, from an uncrashed run (`logbook rehearse --list`), as its children. */
  private async list(item: vscode.TestItem): Promise<void> {
    if (!vscode.workspace.isTrusted || !item.uri) return;
    item.busy = true;
    try {
      let problem: string | undefined;
      await this.spawnRehearsal(
        item.uri.fsPath,
        ['--list'],
        undefined,
        (e) => {
          if (e.event === 'points') this.setPoints(item, e.available);
          if (e.event === 'baseline-failed') problem = errorText(e.error);
        },
        (why) => (problem = why),
      );
      item.error = problem ? new vscode.MarkdownString().appendText(problem) : undefined;
    } finally {
      item.busy = false;
    }
  }

  private setPoints(item: vscode.TestItem, points: readonly Point[]): void {
    const file = item.uri?.fsPath ?? '';
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      // A file removed meanwhile: its points get no line.
    }
    const children = points.map((p) => {
      const id = pointId(file, p);
      const child = this.controller.createTestItem(id, `${p.target} #${p.occurrence} · ${PHASE_WORDS[p.point] ?? p.point}`, item.uri);
      child.description = p.process > 1 ? `${p.spec} (process ${p.process})` : p.spec;
      const line = pointLine(text, p);
      if (line !== undefined) child.range = new vscode.Range(line, 0, line, 0);
      child.sortText = String(this.points.size).padStart(6, '0');
      this.points.set(id, p);
      return child;
    });
    children.forEach((c, i) => (c.sortText = String(i).padStart(6, '0')));
    item.children.replace(children);
  }

  private note(run: vscode.TestRun, item: vscode.TestItem, state: ItemOutcome['state'], messages: vscode.TestMessage[] = [], ms?: number): void {
    if (state === 'enqueued') run.enqueued(item);
    else if (state === 'started') run.started(item);
    else if (state === 'passed') run.passed(item, ms);
    else if (state === 'failed') run.failed(item, messages, ms);
    else if (state === 'errored') run.errored(item, messages, ms);
    else run.skipped(item);
    this.outcomes.set(item.id, {
      id: item.id,
      state,
      messages: messages.map((m) => ({
        text: typeof m.message === 'string' ? m.message : m.message.value,
        line: m.location?.range.start.line,
        file: m.location?.uri.fsPath,
      })),
    });
  }

  /** Which agents a request covers, each with the points asked for (undefined: the mode's selection). */
  private targets(request: vscode.TestRunRequest): Map<vscode.TestItem, vscode.TestItem[] | undefined> {
    const out = new Map<vscode.TestItem, vscode.TestItem[] | undefined>();
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    const include = request.include ?? collect(this.controller.items);
    for (const i of include) {
      if (excluded.has(i.id)) continue;
      if (!i.parent) out.set(i, undefined);
      else if (out.get(i.parent) !== undefined || !out.has(i.parent)) out.set(i.parent, [...(out.get(i.parent) ?? []), i]);
    }
    return out;
  }

  async run(request: vscode.TestRunRequest, token: vscode.CancellationToken, mode: Mode): Promise<void> {
    await this.discover();
    const run = this.controller.createTestRun(request, undefined, false);
    try {
      const targets = this.targets(request);
      if (!vscode.workspace.isTrusted) {
        for (const item of targets.keys())
          this.note(run, item, 'errored', [
            new vscode.TestMessage(
              'Agent Logbook rehearses nothing in an untrusted workspace: a rehearsal runs the agent script. Trust this folder to rehearse it.',
            ),
          ]);
        return;
      }
      for (const [item, only] of targets) {
        if (token.isCancellationRequested) break;
        await this.rehearseItem(run, item, only ? { kind: 'points', specs: only.map((c) => this.points.get(c.id)?.spec ?? '').filter(Boolean) } : mode, token);
      }
    } finally {
      run.end();
      this.decorate();
    }
  }

  private async rehearseItem(run: vscode.TestRun, item: vscode.TestItem, mode: Mode, token: vscode.CancellationToken): Promise<void> {
    const file = item.uri?.fsPath ?? '';
    this.note(run, item, 'started');
    item.children.forEach((c) => {
      if (mode.kind !== 'points' || mode.specs.includes(this.points.get(c.id)?.spec ?? '')) this.note(run, c, 'enqueued');
    });
    this.failing.delete(file);
    this.decorate();
    const args =
      mode.kind === 'all'
        ? ['--points', 'all']
        : mode.kind === 'random'
          ? ['--random', String(mode.n), '--seed', mode.seed]
          : mode.specs.flatMap((s) => ['--point', s]);
    const failed = new Map<number, string[]>();
    let total = 0;
    let done = 0;
    let bad = 0;
    let finished = false;
    let problem: string | undefined;
    const text = readText(file);
    await this.spawnRehearsal(
      file,
      args,
      token,
      (e) => {
        if (e.event === 'points') {
          // The uncrashed run gives the points afresh: a changed agent gets its new children.
          const keep = new Map<string, vscode.TestItem>();
          item.children.forEach((c) => keep.set(c.id, c));
          if (e.available.some((p) => !keep.has(pointId(file, p))) || keep.size !== e.available.length) this.setPoints(item, e.available);
          total = e.selected.length;
          for (const p of e.selected) {
            const child = item.children.get(pointId(file, p));
            if (child) this.note(run, child, 'started');
          }
          run.appendOutput(`${item.label}: uncrashed run ${e.baseline.status}; rehearsing ${total} of ${e.available.length} kill points\r\n`);
        } else if (e.event === 'result') {
          done++;
          const child = item.children.get(pointId(file, e.result.point));
          if (!child) return;
          if (!e.broken) {
            this.note(run, child, 'passed', [], e.result.ms);
          } else {
            bad++;
            const line = pointLine(text, e.result.point);
            this.note(run, child, 'failed', [pointMessage(e.result, e.messages, e.reproduction, item.uri, line)], e.result.ms);
            if (line !== undefined) failed.set(line, [...(failed.get(line) ?? []), `${e.result.point.spec}: ${e.messages[0] ?? 'broken'}`]);
          }
          run.appendOutput(`  ${done}/${total} ${e.broken ? 'BROKEN' : 'ok'}  ${e.result.point.spec}${e.broken ? `: ${e.messages.join('; ')}` : ''}\r\n`);
        } else if (e.event === 'report') {
          finished = true;
          this.note(
            run,
            item,
            e.report.ok ? 'passed' : 'failed',
            e.report.ok ? [] : [new vscode.TestMessage(`${bad} of ${total} kill point(s) broke an invariant.`)],
            e.report.ms,
          );
        } else if (e.event === 'baseline-failed') {
          finished = true;
          const msg = new vscode.TestMessage(errorText(e.error));
          if (item.uri && item.range) msg.location = new vscode.Location(item.uri, item.range);
          this.note(run, item, 'failed', [msg]);
          item.children.forEach((c) => this.note(run, c, 'skipped'));
        }
      },
      (why) => (problem = why),
    );
    if (failed.size) this.failing.set(file, failed);
    if (!finished) {
      if (token.isCancellationRequested) {
        this.note(run, item, 'skipped');
        item.children.forEach((c) => {
          if (this.outcomes.get(c.id)?.state === 'started' || this.outcomes.get(c.id)?.state === 'enqueued') this.note(run, c, 'skipped');
        });
      } else {
        this.note(run, item, 'errored', [new vscode.TestMessage(problem ?? 'The rehearsal ended without a report.')]);
      }
    }
  }

  /**
   * Runs `logbook rehearse <file> --ndjson …` as its own process group on the configured Node (never in this host:
   * it loads better-sqlite3), feeding each event line to `onEvent`. Cancel: SIGINT to the group, then SIGKILL.
   */
  private spawnRehearsal(
    file: string,
    args: string[],
    token: vscode.CancellationToken | undefined,
    onEvent: (e: RehearsalEvent) => void,
    onProblem: (why: string) => void,
  ): Promise<void> {
    const c = readConfig();
    const s = readRehearseSetting();
    let env: Record<string, string>;
    try {
      env = settingsEnv(c);
    } catch (err) {
      onProblem(err instanceof Error ? err.message : String(err));
      return Promise.resolve();
    }
    const input = inputFor(file, c, s);
    if (input.problem) {
      onProblem(input.problem);
      return Promise.resolve();
    }
    const argv = [
      this.paths.cli,
      'rehearse',
      file,
      '--ndjson',
      '--input',
      JSON.stringify(input.value ?? {}),
      ...args,
      ...(s.jobs > 0 ? ['--jobs', String(s.jobs)] : []),
    ];
    const cwd = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file))?.uri.fsPath ?? c.workspaceFolder ?? path.dirname(file);
    this.log.info(`$ ${c.runtimeExecutable} ${argv.map((a) => (/[\s"{}]/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
    let child: ChildProcess;
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((r) => (resolveDone = r));
    try {
      child = spawn(c.runtimeExecutable, argv, {
        cwd,
        env: { ...process.env, ...env, NO_COLOR: '1', ELECTRON_RUN_AS_NODE: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (err) {
      onProblem(`Could not start "${c.runtimeExecutable}" (logbook.runtimeExecutable): ${err instanceof Error ? err.message : String(err)}.`);
      return Promise.resolve();
    }
    const active: ActiveRehearsal = { file, pid: child.pid, done };
    this.active.add(active);
    let buffered = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      buffered += d;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        try {
          onEvent(JSON.parse(line) as RehearsalEvent);
        } catch (err) {
          this.log.warn(`rehearsal event: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8000)));
    const group = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    };
    let killer: NodeJS.Timeout | undefined;
    const cancel = token?.onCancellationRequested(() => {
      this.log.info(`cancelling the rehearsal of ${file} (process group ${child.pid ?? '?'})`);
      group('SIGINT');
      killer = setTimeout(() => group('SIGKILL'), KILL_GRACE_MS);
    });
    return new Promise((resolve) => {
      const finish = (): void => {
        cancel?.dispose();
        // The campaign children and their runs may outlive the rehearsal process itself: the group goes with it.
        group('SIGKILL');
        if (killer) clearTimeout(killer);
        this.active.delete(active);
        resolveDone();
        resolve();
      };
      child.on('error', (err: NodeJS.ErrnoException) => {
        onProblem(
          err.code === 'ENOENT'
            ? `Could not start "${c.runtimeExecutable}" (logbook.runtimeExecutable): no such executable. Set logbook.runtimeExecutable to a Node.js 20 or newer.`
            : `Could not run the rehearsal: ${err.message}.`,
        );
        finish();
      });
      child.on('close', (code, signal) => {
        if (code !== 0 && code !== 1) {
          const lines = stderr
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean);
          onProblem(lines.find((l) => l.startsWith('error')) ?? lines[lines.length - 1] ?? `logbook rehearse ended with ${signal ?? `exit ${code ?? '?'}`}`);
        }
        this.log.info(`logbook rehearse ${file} ended with ${signal ?? `exit ${code ?? '?'}`}`);
        finish();
      });
    });
  }

  /** Debug on kill points: a session killed at the point for real, then the resume stopping at the reconciliation. */
  async debug(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const run = this.controller.createTestRun(request, undefined, false);
    try {
      if (!vscode.workspace.isTrusted) return;
      const points = (request.include ?? []).filter((i) => this.points.has(i.id));
      if (points.length === 0) {
        void vscode.window.showInformationMessage(
          'Debug a kill point: expand an agent in the Test Explorer (it lists its points after an uncrashed run) and debug one of them.',
        );
        return;
      }
      for (const item of points.slice(0, 1)) {
        if (token.isCancellationRequested) break;
        const p = this.points.get(item.id) as Point;
        const file = item.uri?.fsPath ?? '';
        run.started(item);
        const input = inputFor(file, readConfig(), readRehearseSetting());
        await this.startDebug(p, file, input.value ?? {});
        run.skipped(item);
      }
    } finally {
      run.end();
    }
  }

  /** Runs the agent of a file with a profile: the CodeLens and the rehearse command. */
  async rehearseFile(file: string, profile = readRehearseSetting().points === 'random' ? this.randomProfile : this.allProfile): Promise<void> {
    const item = await this.itemFor(file);
    if (!item) {
      void vscode.window.showInformationMessage(`${path.basename(file)} defines no agent (no defineAgent call), so there is nothing to rehearse.`);
      return;
    }
    const cts = new vscode.CancellationTokenSource();
    try {
      await profile.runHandler(new vscode.TestRunRequest([item], undefined, profile), cts.token);
    } finally {
      cts.dispose();
    }
  }

  /** Red lines where the last rehearsal of a file broke an invariant, until its next rehearsal. */
  decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const lines = this.failing.get(editor.document.uri.fsPath);
      editor.setDecorations(
        this.decoration,
        [...(lines ?? new Map<number, string[]>())].map(([line, msgs]) => ({
          range: new vscode.Range(line, 0, line, 0),
          hoverMessage: new vscode.MarkdownString().appendText(`Rehearsal: ${msgs.join('\n')}`),
          renderOptions: {
            after: {
              contentText: `  ✗ rehearsal: ${msgs[0] ?? ''}${msgs.length > 1 ? ` (+${msgs.length - 1})` : ''}`,
              color: new vscode.ThemeColor('testing.message.error.decorationForeground'),
            },
          },
        })),
      );
    }
  }

  dispose(): void {
    for (const a of this.active) {
      if (a.pid !== undefined) {
        try {
          process.kill(-a.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    for (const s of this.subs) s.dispose();
  }
}

function collect(items: vscode.TestItemCollection): vscode.TestItem[] {
  const out: vscode.TestItem[] = [];
  items.forEach((i) => out.push(i));
  return out;
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function errorText(e: unknown): string {
  const m = (e as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : JSON.stringify(e);
}

function pointMessage(
  r: RehearsalCampaign,
  messages: readonly string[],
  repro: readonly string[],
  uri: vscode.Uri | undefined,
  line: number | undefined,
): vscode.TestMessage {
  const text = [
    ...messages,
    '',
    'Reproduce:',
    ...repro.map((l) => `  ${l}`),
    '',
    'Or debug this point: the run is killed here, then resumed stopping at the reconciliation.',
  ].join('\n');
  const m = new vscode.TestMessage(text);
  if (uri && line !== undefined) m.location = new vscode.Location(uri, new vscode.Position(line, 0));
  m.contextValue = r.point.spec;
  return m;
}

/**
 * The input to rehearse a file with: a `logbook` launch configuration of that program (its input or inputFile),
 * else the `logbook.rehearse` setting's, else {}.
 */
export function inputFor(file: string, c: LogbookConfig, s: RehearseSetting): { value: unknown; problem?: string } {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file)) ?? vscode.workspace.workspaceFolders?.[0];
  const root = folder?.uri.fsPath ?? c.workspaceFolder ?? '';
  const configs = vscode.workspace.getConfiguration('launch', folder?.uri ?? null).get<Array<Record<string, unknown>>>('configurations') ?? [];
  const expand = (v: string): string => v.replace(/\$\{workspaceFolder\}/g, root);
  const launch = configs.find((x) => {
    if (x.type !== DEBUG_TYPE || x.request !== 'launch' || x.resume !== undefined || x.compensate !== undefined || typeof x.program !== 'string') return false;
    if (x.input === undefined && x.inputFile === undefined) return false;
    const cwd = typeof x.cwd === 'string' ? path.resolve(root, expand(x.cwd)) : root;
    return path.resolve(cwd, expand(x.program)) === file;
  });
  if (launch?.inputFile !== undefined) {
    const cwd = typeof launch.cwd === 'string' ? path.resolve(root, expand(launch.cwd)) : root;
    const f = path.resolve(cwd, expand(typeof launch.inputFile === 'string' ? launch.inputFile : ''));
    try {
      return { value: JSON.parse(fs.readFileSync(f, 'utf8')) as unknown };
    } catch (err) {
      return {
        value: undefined,
        problem: `The launch configuration "${String(launch.name)}" reads its input from ${f}, which is not readable JSON (${err instanceof Error ? err.message : String(err)}). Fix inputFile in launch.json.`,
      };
    }
  }
  if (launch?.input !== undefined) return { value: launch.input };
  return { value: s.input ?? {} };
}
