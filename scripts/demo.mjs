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
const logbook = (...args) => spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args, '--journal', db], { cwd: root, env, encoding: 'utf8' });
const say = (s = '') => console.log(s);
const outbox = () => (existsSync(join(dir, 'email-outbox.json')) ? JSON.parse(readFileSync(join(dir, 'email-outbox.json'), 'utf8')) : { sent: [], calls: 0 });

/** The CLI's own output, indented; rows of the emails 2–28 (all alike) are folded into one ⋮ line per table. */
function echo(text) {
  let folded = false;
  for (const line of text.replace(/\n$/, '').split('\n')) {
    if (/user([2-9]|1\d|2[0-8])@example\.com/.test(line)) {
      if (!folded) say('  ⋮');
      folded = true;
      continue;
    }
    folded = false;
    say(line === '' ? '' : `  ${line}`);
  }
}

say('Agent Logbook demo: an email campaign to 50 recipients, killed mid-send, resumed without a duplicate.');
say("Below each command is the CLI's own output; lines starting with # are the demo's notes.\n");
say('$ logbook run examples/email-campaign.ts --run-id demo --crash-at email.send#30@after-execute');
const run = logbook('run', script, '--run-id', 'demo', '--crash-at', 'email.send#30@after-execute');
if (run.signal !== 'SIGKILL') throw new Error(`expected a SIGKILL, got ${run.status}: ${run.stderr}`);
if (`${run.stdout}${run.stderr}`.trim()) echo(`${run.stdout}${run.stderr}`);
say(`# the process was killed by SIGKILL right after the provider accepted email 30,`);
say(`# before the journal recorded it. The provider has sent ${outbox().sent.length} emails.\n`);

say('$ logbook show demo');
const shown = logbook('show', 'demo');
echo(shown.stdout);
const crashed = JSON.parse(logbook('show', 'demo', '--json').stdout);
const committed = crashed.actions.filter((a) => a.status === 'committed').length;
say(`# ${committed} emails committed in the journal; email 30 is in doubt: sent, but not recorded.\n`);

say('$ logbook resume demo');
const resumed = logbook('resume', 'demo');
echo(resumed.stdout);
const o = JSON.parse(logbook('show', 'demo', '--json').stdout);
say('# the 30 finished steps replay from the journal without running; the step of email 30 is redone, and its');
say('# in-doubt send is reconciled by verify (found: recorded as committed, not re-sent); emails 31–50 are sent.');

const box = outbox();
const keys = box.sent.map((s) => s.key);
const duplicates = keys.length - new Set(keys).size;
say(`\nThe provider's own record: total ${box.sent.length}, send calls ${box.calls}, duplicates ${duplicates}.`);
say(`Journal: ${db}`);
const ok = resumed.status === 0 && o.run.status === 'completed' && box.sent.length === 50 && duplicates === 0 && box.calls === 50;
say(ok ? '\nEvery email went out exactly once.' : '\nSomething is off: see above.');
process.exitCode = ok ? 0 : 1;
