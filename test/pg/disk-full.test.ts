// A PostgreSQL server whose disk fills up under a run: a storage error (exit 5), never the script failing, and the run
// resumes once the server has space again. The server's data directory is a small tmpfs in a private mount namespace.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES, tmpDir } from '../helpers';

const asRoot = process.getuid?.() === 0;

describe('PostgreSQL: the server disk fills up under a run', function () {
  this.timeout(300_000);

  it('stops the run as a storage error (exit 5, nothing compensated); it resumes once there is space, each charge made once', async function () {
    // PostgreSQL refuses to run as root, and only root may switch to the `postgres` user (as scripts/pg-server.mjs does).
    if (!asRoot) this.skip();
    const harness = (await import(path.join(__dirname, '..', '..', 'scripts', 'pg-server.mjs'))) as {
      ensurePostgres(): string;
      freePort(): Promise<number>;
    };
    const bin = harness.ensurePostgres();
    const dir = tmpDir();
    fs.chmodSync(dir, 0o755);
    const port = await harness.freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
    const logbook = (args: string): string =>
      `rc=0; ${q(process.execPath)} ${q(CLI)} ${args} > "$D/out" 2>&1 || rc=$?; echo "@@rc=$rc"; cat "$D/out"; echo "@@end"`;
    const pg = (args: string): string => `runuser -u postgres -- ${q(path.join(bin, 'pg_ctl'))} -D "$D/disk/data" ${args}`;
    const start = pg(
      `-l "$D/pg.log" -o "-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c max_wal_size=32MB -c min_wal_size=32MB" -w -t 60 start > /dev/null`,
    );
    const script = [
      'set -e',
      `D=${q(dir)}`,
      `trap '${pg('-m immediate -w stop').replace(/'/g, `'\\''`)} > /dev/null 2>&1 || true' EXIT`,
      'mkdir -p "$D/disk" && mount -t tmpfs -o size=80m tmpfs "$D/disk"',
      'chmod 755 "$D/disk" && chown postgres:postgres "$D/disk" && touch "$D/pg.log" && chown postgres:postgres "$D/pg.log"',
      `runuser -u postgres -- ${q(path.join(bin, 'initdb'))} -D "$D/disk/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-instructions > /dev/null`,
      start,
      // Leave about 10 MB: less than the run's checkpoints need.
      'avail=$(df -k --output=avail "$D/disk" | tail -1); dd if=/dev/zero of="$D/disk/filler" bs=1k count=$((avail - 10240)) 2> /dev/null',
      logbook(`run ${q(path.join(FIXTURES, 'misbehaving.ts'))} --run-id big --journal ${q(url)}`),
      // Space again, and the server back if the full disk stopped it (a WAL write that fails is a PANIC).
      'rm -f "$D/disk/filler" && mount -o remount,size=512m "$D/disk"',
      `${pg('status > /dev/null')} || ${start}`,
      logbook(`resume big --journal ${q(url)}`),
      logbook(`ls --json --journal ${q(url)}`),
    ].join('\n');
    const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', LOGBOOK_STATE_DIR: dir, MISBEHAVE: 'big-random' },
      timeout: 280_000,
      maxBuffer: 64 << 20,
    });
    const log = fs.existsSync(path.join(dir, 'pg.log')) ? fs.readFileSync(path.join(dir, 'pg.log'), 'utf8').slice(-3000) : '';
    assert.equal(r.status, 0, `namespace script failed (${r.signal ?? r.error?.message ?? ''}): ${r.stderr.slice(-3000)}\n${r.stdout.slice(-3000)}\n${log}`);
    const [full, again, shown] = [...r.stdout.matchAll(/@@rc=(\d+)\n([\s\S]*?)@@end/g)].map((m) => ({ rc: Number(m[1]), out: m[2] ?? '' }));
    assert.ok(full && again && shown, r.stdout);

    // The full disk is the journal's failure: exit 5, resumable, said as a storage error (the server may also have
    // stopped under it, which the client sees as a lost connection), and not the script's failure.
    assert.equal(full.rc, 5, full.out);
    assert.match(full.out, /\[LB_DB_(DISK_FULL|UNREACHABLE)\]/, full.out);
    assert.match(full.out, /interrupted/);
    assert.doesNotMatch(full.out, /internal error|\n\s+at /, 'no stack trace');
    const w = JSON.parse(fs.readFileSync(path.join(dir, 'misbehaving-world.json'), 'utf8')) as { charged: string[]; refunded: string[] };
    assert.deepEqual(w.refunded, [], 'onFailure: compensate did not fire on a storage error');

    assert.equal(again.rc, 0, `${again.out}\n${log}`);
    assert.match(again.out, /completed/);
    const after = JSON.parse(fs.readFileSync(path.join(dir, 'misbehaving-world.json'), 'utf8')) as { charged: string[]; refunded: string[] };
    assert.deepEqual(after.charged, ['charge:big:1', 'charge:big:3'], 'each charge made once');
    assert.deepEqual(after.refunded, []);
    const runs = JSON.parse(shown.out) as Array<{ id: string; status: string }>;
    assert.deepEqual(
      runs.map((x) => [x.id, x.status]),
      [['big', 'completed']],
    );
  });
});
