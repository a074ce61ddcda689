// The run's environment: envFile and env in the launch attributes, secrets masked in Variables and output, never journaled.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAP_FIXTURES, Session, sessionsPerTest } from './harness';

const KEYED = path.join(DAP_FIXTURES, 'keyed.ts');
const SECRET = 'sk-test-5f1c9e77d2';

describe('dap: the run environment (envFile, env) and secrets', function () {
  const session = sessionsPerTest();
  let s: Session;
  beforeEach(async () => {
    s = await session();
    fs.writeFileSync(path.join(s.dir, 'agent.env'), `# provider settings\nexport DEMO_API_KEY="${SECRET}"\nDEMO_REGION=eu # overridden by env\n`);
  });

  it('gives the runner envFile then env (env wins), masks the key in output, and journals none of it', async () => {
    const exited = s.exitCode();
    await s.launch({ program: KEYED, runId: 'env-1', envFile: 'agent.env', env: { DEMO_REGION: 'us' } });
    assert.equal(await exited, 0);
    assert.match(s.text(), /run env-1 completed .*"authorized":true,"region":"us"/);
    assert.match(s.text('stdout'), /calling with key «secret»/);
    assert.ok(!s.text().includes(SECRET), 'the secret reached the Debug Console');
    // The file and its WAL: whatever SQLite wrote, in bytes.
    const db = path.dirname(s.db);
    const journal = fs
      .readdirSync(db)
      .filter((f) => f.startsWith(path.basename(s.db)))
      .map((f) => fs.readFileSync(path.join(db, f)).toString('latin1'))
      .join('');
    assert.ok(journal.includes('env-1') && !journal.includes(SECRET), 'the secret was journaled');
  });

  it("masks a secret that reached an action's args in Variables and in the Debug Console", async () => {
    await s.launch({ program: KEYED, runId: 'env-2', input: { leak: true }, envFile: 'agent.env' }, { functions: [{ name: 'api.call' }] });
    await s.stopped();
    const args = await s.scope('Action');
    const auth = Object.entries(args).find(([k]) => k === 'args');
    assert.ok(auth, `no args in ${Object.keys(args).join(', ')}`);
    assert.match(auth[1].value, /auth: '«secret»'/);
    const inner = await s.vars(auth[1].ref);
    assert.equal(inner.auth?.value, "'«secret»'");
    assert.equal(await s.evaluate('args.auth'), "'«secret»'");
    assert.equal(await s.evaluate('args.auth.length'), String(SECRET.length));
    assert.equal(await s.runToEnd(), 0);
    assert.match(s.text(), /run env-2 completed .*"echoed":"«secret»"/);
    assert.ok(!s.text().includes(SECRET), 'the secret reached the Debug Console');
  });

  it('refuses an envFile that does not exist, naming the attribute and the file', async () => {
    const msg = await s.launchFails({ program: KEYED, envFile: 'missing.env' });
    assert.match(msg, /attribute "envFile": cannot read the env file .*missing\.env .*Create the file, or fix the path in attribute "envFile"/);
    assert.deepEqual(s.runnerPids, []);
  });

  it("takes [] and null as the arguments of argument-less custom requests (nvim-dap sends Lua's {} as [])", async () => {
    await s.launch({ program: path.join(DAP_FIXTURES, 'order.ts'), input: { ship: true }, runId: 'env-nvim' }, { filters: ['approval'] });
    await s.stopped();
    const exited = s.exitCode();
    const r = await s.dc.customRequest('approve', []);
    assert.match(r.body.message, /approved: order\.ship ship:env-nvim/);
    assert.equal(await exited, 0);
    await assert.rejects(s.dc.customRequest('approve', null), /No run is active in this session/);
  });
});
