// A rehearsal child process: takes campaigns over IPC one at a time, each on its own scratch files.

import { loadScript } from '../loader/loadScript';
import { describe } from '../runtime/errors';
import { ENGLISH } from '../shared/zodEnglish';
import { runCampaign, type Prober } from './campaign';
import { prober } from './probe';
import { FromCampaignChild, ToCampaignChild, type CampaignSetup } from './reportSchema';

let setup: CampaignSetup | undefined;
let probe: Prober | undefined;
let queue: Promise<void> = Promise.resolve();

function send(m: FromCampaignChild): void {
  process.send?.(FromCampaignChild.parse(m, ENGLISH));
}

async function handle(raw: unknown): Promise<void> {
  const m = ToCampaignChild.parse(raw, ENGLISH);
  switch (m.type) {
    case 'setup': {
      setup = m.setup;
      probe = prober((await loadScript(m.setup.script)).agent);
      send({ type: 'ready' });
      return;
    }
    case 'campaign': {
      if (!setup || !probe) throw new Error('campaign before setup');
      try {
        send({ type: 'result', result: await runCampaign(setup, m.index, m.point, probe) });
      } catch (err) {
        send({ type: 'failed', index: m.index, message: describe(err) });
      }
      return;
    }
    case 'exit':
      process.disconnect?.();
      return;
  }
}

process.on('message', (raw) => {
  queue = queue.then(
    () => handle(raw),
    () => handle(raw),
  );
  queue.catch((err: unknown) => {
    process.stderr.write(`rehearsal child: ${describe(err)}\n`);
    process.exitCode = 1;
    process.disconnect?.();
  });
});
