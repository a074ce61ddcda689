// The defences against a damaged journal row, taken out one at a time for the controls that show an attack is real.

import { strict as assert } from 'node:assert';
import { StepActions } from '../../src/runtime/stepActions';
import { JournalReader } from '../../src/runtime/store/reader';

/** Runs `fn` with the check before an attempt (JournalReader.firstDamage) finding nothing. */
export async function withoutCheckBefore<T>(fn: () => Promise<T>): Promise<T> {
  const original = Object.getOwnPropertyDescriptor(JournalReader.prototype, 'firstDamage');
  assert.ok(original);
  JournalReader.prototype.firstDamage = () => undefined;
  try {
    return await fn();
  } finally {
    Object.defineProperty(JournalReader.prototype, 'firstDamage', original);
  }
}

/** Runs `fn` with replay's page errors swallowed, as before StepActions kept them (StepActions.failure). */
export async function withPageErrorsSwallowed<T>(fn: () => Promise<T>): Promise<T> {
  const proto = StepActions.prototype as unknown as { load: (this: StepActions) => void };
  const load = proto.load;
  proto.load = function (this: StepActions): void {
    try {
      load.call(this);
    } catch (err) {
      this.failure = undefined;
      throw err;
    }
  };
  try {
    return await fn();
  } finally {
    proto.load = load;
  }
}
