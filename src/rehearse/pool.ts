// Runs campaigns in parallel child processes (one per core by default), handing out points as children free up.

import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCodes, LogbookError } from '../runtime/errors';
import { ENGLISH } from '../shared/zodEnglish';
import { FromCampaignChild, type CampaignResult, type CampaignSetup, type Point, type ToCampaignChild } from './reportSchema';

export interface PoolOptions {
  readonly jobs: number;
  readonly setup: CampaignSetup;
  readonly points: readonly Point[];
  readonly onResult: (r: CampaignResult) => void;
}

function campaignChildPath(): string {
  const p = path.join(__dirname, 'campaignChild.js');
  if (!fs.existsSync(p)) throw new LogbookError(ErrorCodes.USAGE, `The rehearsal child script ${p} is missing.`, 'Run `npm run build` first.');
  return p;
}

/** A campaign that could not report: counted as broken, with the reason. */
export function failedCampaign(index: number, point: Point, message: string): CampaignResult {
  return {
    index,
    point,
    kills: [],
    processes: 0,
    status: 'unknown',
    finished: false,
    sameOutput: false,
    sameEffects: null,
    effectsDiff: [],
    duplicates: [],
    settled: [],
    decisions: [],
    unsettled: [],
    approvals: [],
    stepsRedoneMax: 0,
    saved: {},
    error: message,
    commands: [],
    ms: 0,
  };
}

export function runPool(o: PoolOptions): Promise<CampaignResult[]> {
  const results: CampaignResult[] = [];
  let next = 0;
  const file = campaignChildPath();
  const count = Math.max(1, Math.min(o.jobs, o.points.length));
  return new Promise((resolve) => {
    let alive = 0;
    const finish = (): void => {
      // Points no child lived to run are reported, not dropped.
      while (next < o.points.length) {
        const r = failedCampaign(next, o.points[next] as Point, 'no rehearsal child was left to run it');
        next++;
        results.push(r);
        o.onResult(r);
      }
      resolve(results.sort((a, b) => a.index - b.index));
    };
    if (o.points.length === 0) return finish();
    for (let w = 0; w < count; w++) {
      const child: ChildProcess = fork(file, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv: [] });
      alive++;
      let current: number | undefined;
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
      const post = (m: ToCampaignChild): void => void child.send(m);
      const give = (): void => {
        if (next >= o.points.length) {
          current = undefined;
          post({ type: 'exit' });
          return;
        }
        current = next++;
        post({ type: 'campaign', index: current, point: o.points[current] as Point });
      };
      const record = (r: CampaignResult): void => {
        results.push(r);
        o.onResult(r);
      };
      child.on('message', (raw) => {
        const m = FromCampaignChild.parse(raw, ENGLISH);
        if (m.type === 'result') record(m.result);
        if (m.type === 'failed') record(failedCampaign(m.index, o.points[m.index] as Point, m.message));
        give();
      });
      child.on('exit', (code, signal) => {
        if (current !== undefined) {
          const why = stderr.trim().split('\n').slice(-1)[0] ?? '';
          record(failedCampaign(current, o.points[current] as Point, `its child process died (${signal ?? `exit ${code ?? '?'}`})${why ? `: ${why}` : ''}`));
          current = undefined;
        }
        if (--alive === 0) finish();
      });
      post({ type: 'setup', setup: o.setup });
    }
  });
}
