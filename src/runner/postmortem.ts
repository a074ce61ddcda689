// After a SIGKILL: read the journal (read-only, in a fresh runner) for where the run died and what is in doubt.

import * as fs from 'node:fs';
import { isPostgresUrl, openStore, type Store } from '../runtime/store';
import type { Postmortem } from '../link/runnerProtocol';
import { wrongNode } from './errorText';

export function postmortem(database: string, runId: string | undefined): Postmortem {
  const empty: Postmortem = { inDoubt: [], compensationInDoubt: [] };
  if (!runId || (!isPostgresUrl(database) && !fs.existsSync(database))) return { ...empty, ...(runId ? { runId } : {}) };
  let store: Store;
  try {
    store = openStore(database, { readonly: true });
  } catch (err) {
    throw wrongNode(err) ?? err;
  }
  try {
    const r = store.reader;
    const row = r.run(runId);
    if (!row) return { ...empty, runId };
    const n = r.stepCount(runId);
    const last = n > 0 ? r.step(runId, n - 1) : undefined;
    const compensationInDoubt: Postmortem['compensationInDoubt'] = [];
    for (const a of r.allActions(runId)) if (a.compensation === 'started') compensationInDoubt.push({ id: a.id, type: a.type });
    return {
      runId,
      status: r.view(row).effectiveStatus,
      ...(last ? { lastStep: { idx: last.idx, name: last.name, status: last.status } } : {}),
      inDoubt: r.inDoubt(runId).map((a) => ({ id: a.id, type: a.type, stepIdx: a.step_idx, executions: a.executions })),
      compensationInDoubt,
    };
  } finally {
    store.close();
  }
}
