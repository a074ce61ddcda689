// Issue 10 §3.8: storage failures diagnosed as what they are, through the real CLI on real filesystems: a full disk
// (a small tmpfs), a read-only folder (a tmpfs remounted read-only), a read-only file (a read-only bind mount) and an
// empty journal file. Mounts are made in a private mount namespace (`unshare --mount`, with a user namespace when not
// root), so nothing leaks onto the machine.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES, cli, tmpDir } from '../helpers';

const misbehaving = path.join(FIXTURES, 'misbehaving.ts');
const knobs = path.join(FIXTURES, 'knobs.ts');
const asRoot = process.getuid?.() === 0;

interface Step {
  readonly rc: number;
  readonly out: string;
}

/**
 * Runs `sh` lines in a private mount namespace; `logbook …` lines run the real CLI. Returns each CLI call's exit code
 * and output, in order.
 */
function inMountNamespace(dir: string, lines: string[], env: Record<string, string> = {}): Step[] {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const script = lines
    .map((l) =>
      l.startsWith('logbook ')
        ? `rc=0; ${q(process.execPath)} ${q(CLI)} ${l.slice(8)} > "$D/out" 2>&1 || rc=$?; echo "@@rc=$rc"; cat "$D/out"; echo "@@end"`
        : l,
    )
    .join('\n');
  const r = spawnSync('unshare', [...(asRoot ? [] : ['--user', '--map-root-user']), '--mount', 'sh', '-c', `set -e\nD=${q(dir)}\n${script}`], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', LOGBOOK_STATE_DIR: dir, ...env },
    timeout: 180_000,
  });
  assert.equal(r.status, 0, `namespace script failed: ${r.stderr}\n${r.stdout}`);
  return [...r.stdout.matchAll(/@@rc=(\d+)\n([\s\S]*?)@@end/g)].map((m) => ({ rc: Number(m[1]), out: m[2] ?? '' }));
}

describe('cli: storage errors diagnosed (issue 10 §3.8)', () => {
  it('disk full mid-run: LB_DB_DISK_FULL, exit 5, no stack and no compensation; resumable once there is space', () => {
    const dir = tmpDir();
    const [full, again] = inMountNamespace(
      dir,
      [
        'mkdir -p "$D/disk" && mount -t tmpfs -o size=1m tmpfs "$D/disk"',
        'logbook run "$SCRIPT" --run-id big --journal "$D/disk/journal.db"',
        'mount -o remount,size=64m "$D/disk"',
        'logbook resume big --journal "$D/disk/journal.db"',
      ],
      { SCRIPT: misbehaving, MISBEHAVE: 'big' },
    );
    assert.ok(full && again, 'both commands ran');
    assert.equal(full.rc, 5, full.out);
    assert.match(
      full.out,
      /\[LB_DB_DISK_FULL\] The disk holding the journal .*journal\.db is full .*Nothing journaled was lost: the run stays resumable.*Free space on that disk \(do not delete the journal/,
    );
    assert.doesNotMatch(full.out, /internal error|\n\s+at /, 'no stack trace');
    const w = JSON.parse(fs.readFileSync(path.join(dir, 'misbehaving-world.json'), 'utf8')) as { charged: string[]; refunded: string[] };
    assert.deepEqual(w.refunded, [], 'onFailure: compensate did not fire on a storage error');
    assert.equal(again.rc, 0, again.out);
    assert.match(again.out, /completed/);
  });

  it('disk full while starting a run: LB_DB_DISK_FULL, exit 5, the remedy is to start it again, and no run is left', () => {
    const dir = tmpDir();
    // An input larger than the disk: the journal is created, and the run's first transaction cannot fit.
    fs.writeFileSync(path.join(dir, 'big.json'), JSON.stringify({ order: 'o'.repeat(2_000_000) }));
    const [full, ls] = inMountNamespace(dir, [
      'mkdir -p "$D/disk" && mount -t tmpfs -o size=1m tmpfs "$D/disk"',
      `logbook run ${JSON.stringify(path.join(FIXTURES, 'all-effects.ts'))} --run-id big --input-file "$D/big.json" --journal "$D/disk/journal.db"`,
      'logbook ls --json --journal "$D/disk/journal.db"',
    ]);
    assert.ok(full && ls, 'both commands ran');
    assert.equal(full.rc, 5, full.out);
    assert.match(
      full.out,
      /\[LB_DB_DISK_FULL\] The disk holding the journal .*journal\.db is full .*while creating the run\. Nothing was changed.*Free space on that disk .*then give the command again/s,
    );
    assert.doesNotMatch(full.out, /internal error|SqliteError|\n\s+at /, 'no stack trace, no raw driver error');
    assert.equal(ls.rc, 0, ls.out);
    assert.deepEqual(JSON.parse(ls.out), [], 'no run was left half made');
  });

  it('a read-only folder: LB_DB_READONLY (not LB_DB_CORRUPT), exit 5, and no advice to move the journal aside', () => {
    const dir = tmpDir();
    const [first, run, ls] = inMountNamespace(
      dir,
      [
        'mkdir -p "$D/ro" && mount -t tmpfs -o size=8m tmpfs "$D/ro"',
        'logbook run "$SCRIPT" --run-id a --journal "$D/ro/journal.db"',
        'mount -o remount,ro "$D/ro"',
        'logbook run "$SCRIPT" --run-id b --journal "$D/ro/journal.db"',
        'logbook ls --journal "$D/ro/journal.db"',
      ],
      { SCRIPT: knobs },
    );
    assert.equal(first?.rc, 0, first?.out);
    for (const r of [run, ls]) {
      assert.equal(r?.rc, 5, r?.out);
      assert.match(r?.out ?? '', /\[LB_DB_READONLY\].*read-only/);
      assert.doesNotMatch(r?.out ?? '', /LB_DB_CORRUPT|move this one aside/);
      assert.match(r?.out ?? '', /do not (move or )?delete/);
    }
  });

  it('a read-only journal file in a writable folder: run refused with LB_DB_READONLY; show still reads it', () => {
    const dir = tmpDir();
    const [first, run, showIt] = inMountNamespace(
      dir,
      [
        'logbook run "$SCRIPT" --run-id a --journal "$D/journal.db"',
        'mount --bind "$D/journal.db" "$D/journal.db" && mount -o remount,bind,ro "$D/journal.db"',
        'logbook run "$SCRIPT" --run-id b --journal "$D/journal.db"',
        'logbook show a --journal "$D/journal.db"',
      ],
      { SCRIPT: knobs },
    );
    assert.equal(first?.rc, 0, first?.out);
    assert.equal(run?.rc, 5, run?.out);
    assert.match(run?.out ?? '', /\[LB_DB_READONLY\] The journal .*journal\.db cannot be written: the file is read-only for this user.*Nothing was written/);
    assert.equal(showIt?.rc, 0, showIt?.out);
    assert.match(showIt?.out ?? '', /completed/);
  });

  it('a zero-length journal: LB_DB_EMPTY for ls and show (not "no such table"); run makes it a journal', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'journal.db'), '');
    for (const args of [['ls'], ['show', 'x']]) {
      const r = cli(dir, args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(
        r.stderr,
        /\[LB_DB_EMPTY\] The journal .*journal\.db is an empty file \(0 bytes\): it holds no runs\. Pass --journal with the journal you meant/,
      );
      assert.doesNotMatch(r.stderr, /no such table|internal error/);
    }
    const r = cli(dir, ['run', knobs, '--run-id', 'fresh']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(cli(dir, ['ls']).status, 0);
  });
});
