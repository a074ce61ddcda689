// Shared steps for tests of the order example: a run taken to the approval gate or to the end, and its providers.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, cli } from '../helpers';
import { readJson } from './util';

export const ORDER = path.join(EXAMPLES, 'order-fulfilment.ts');
export const RUN = 'order-run';
export const SHIP = `ship:${RUN}:order-1001`;
export const CHARGE = `charge:${RUN}:order-1001`;
export const EMAIL = `confirm:${RUN}:order-1001`;
export const KETTLE = `reserve:${RUN}:order-1001:sku-kettle`;
export const MUG = `reserve:${RUN}:order-1001:sku-mug`;
export const INITIAL_STOCK = { 'sku-kettle': 12, 'sku-mug': 40, 'sku-tea': 100 };

/** Runs the order up to its approval gate (exit 3). */
export function toGate(dir: string): void {
  const r = cli(dir, ['run', ORDER, '--run-id', RUN]);
  assert.equal(r.status, 3, r.stdout + r.stderr);
}

/** Runs the order to completion: to the gate, then `approve` (which resumes). */
export function completed(dir: string): void {
  toGate(dir);
  const r = cli(dir, ['approve', RUN, SHIP]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
}

export const warehouse = (dir: string): any => readJson(dir, 'warehouse.json');
export const payments = (dir: string): any => readJson(dir, 'payments.json');
/** The carrier's record; no file means it never shipped anything. */
export const carrier = (dir: string): any => (fs.existsSync(path.join(dir, 'carrier.json')) ? readJson(dir, 'carrier.json') : { shipments: [] });
