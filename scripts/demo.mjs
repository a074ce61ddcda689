// `npm run demo`: the email-campaign story, for real — SIGKILL after email 30 was sent, then `logbook resume`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, '.logbook', 'demo');
const db = join(dir, 'journal.db');
const script = join(root, 'examples', 'email-campaign.ts');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const env = { ...process.env, LOGBOOK_STATE_DIR: dir };
const logbook = (...args) => spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args, '--db', db], { cwd: root, env, encoding: 'utf8' });
const say = (s = '') => console.log(s);
const outbox = () => (existsSync(join(dir, 'email-outbox.json')) ? JSON.parse(readFileSync(join(dir, 'email-outbox.json'), 'utf8')) : { sent: [], calls: 0 });

say('Agent Logbook demo: an email campaign to 50 recipients, killed mid-send, resumed without a duplicate.\n');
say('$ logbook run examples/email-campaign.ts --run-id demo --crash-at email.send#30@after-execute');
const run = logbook('run', script, '--run-id', 'demo', '--crash-at', 'email.send#30@after-execute');
say(`  → the process was killed by ${run.signal ?? `exit ${run.status}`} right after the provider accepted email 30,`);
say(`    before the journal recorded it. The provider has sent ${outbox().sent.length} emails.\n`);
if (run.signal !== 'SIGKILL') throw new Error(`expected a SIGKILL, got ${run.status}: ${run.stderr}`);

const crashed = JSON.parse(logbook('show', 'demo', '--json').stdout);
const committed = crashed.actions.filter((a) => a.status === 'committed').length;
const doubt = crashed.actions.filter((a) => a.inDoubt).map((a) => a.id);
say('$ logbook show demo');
say(`  status ${crashed.run.status}; ${committed} emails committed in the journal; in doubt: ${doubt.join(', ')}\n`);

say('$ logbook resume demo');
const resumed = logbook('resume', 'demo', '--json');
const o = JSON.parse(resumed.stdout);
const verified = o.stats.reconciled.filter((r) => r.outcome === 'verified').length;
const emailStepsSkipped = o.stats.stepsReplayed - 1;
say(`  → ${o.status}: skipped ${emailStepsSkipped} (already committed), reconciled ${o.stats.reconciled.length} (${verified} found by verify, not re-sent), sent ${o.stats.actionsExecuted}`);

const box = outbox();
const keys = box.sent.map((s) => s.key);
const duplicates = keys.length - new Set(keys).size;
say(`\nThe provider's own record: total ${box.sent.length}, send calls ${box.calls}, duplicates ${duplicates}.`);
say(`Output: ${JSON.stringify(o.output)}. Journal: ${db}`);
const ok = o.status === 'completed' && box.sent.length === 50 && duplicates === 0 && box.calls === 50;
say(ok ? '\nEvery email went out exactly once.' : '\nSomething is off: see above.');
process.exitCode = ok ? 0 : 1;
