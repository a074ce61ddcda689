// The runs tree pages its roots: revealing a run past the first page (a workspace with many runs) must page the roots
// until the run is among them, or the view cannot find the node to select.

import { strict as assert } from 'node:assert';
import { PAGE, TreeModel, type ReaderSource } from '../../src/extension/tree/treeModel';

const TOTAL = PAGE.runs * 2 + 50;

function dto(i: number): Record<string, unknown> {
  return { id: `r${i}`, parentId: null, parentStep: null, status: 'completed' };
}

/** A reader with TOTAL top-level runs, newest first, answering only what locate and roots ask. */
const source = {
  request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (method === 'runs') {
      const offset = Number(params.offset);
      const limit = Number(params.limit);
      const runs = Array.from({ length: Math.max(0, Math.min(limit, TOTAL - offset)) }, (_, k) => dto(offset + k));
      return Promise.resolve({ runs, total: TOTAL });
    }
    if (method === 'run') {
      const i = Number(String(params.runId).slice(1));
      return Promise.resolve(i < TOTAL ? dto(i) : null);
    }
    return Promise.reject(new Error(`not asked in this test: ${method}`));
  },
} as unknown as ReaderSource;

describe('runs tree: reveal of a run past the first page of roots', () => {
  it('pages the roots until the run is one of them, and emits the root change', async () => {
    const model = new TreeModel(source);
    const changes: unknown[] = [];
    model.onChange((nodes) => changes.push(...nodes));
    const first = await model.roots();
    assert.ok(!first.some((n) => n.kind === 'run' && n.run.id === `r${PAGE.runs + 20}`), 'not on the first page');
    const node = await model.locate(`r${PAGE.runs + 20}`);
    assert.equal(node?.kind, 'run');
    const roots = await model.roots();
    assert.ok(
      roots.some((n) => n === node),
      'the located node is one of the roots the view is given',
    );
    assert.ok(changes.includes(undefined), 'the view was told the roots changed');
  });

  it('a run on the first page is found without paging', async () => {
    const model = new TreeModel(source);
    const node = await model.locate('r3');
    assert.ok((await model.roots()).some((n) => n === node));
    assert.equal((await model.roots()).filter((n) => n.kind === 'run').length, PAGE.runs);
  });
});
