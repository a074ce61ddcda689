// A storage error promises only what holds: after a failed fsync the last commit may be gone, so it does not say
// "nothing journaled was lost".

import { strict as assert } from 'node:assert';
import { storageError } from '../../src/runtime/store/storageError';

function sqliteFailure(code: string): Error {
  return Object.assign(new Error('disk I/O error'), { code });
}

describe('storage errors say what was kept', () => {
  it('a failed fsync is LB_DB_IO and promises only what the script was told', () => {
    const e = storageError(sqliteFailure('SQLITE_IOERR_FSYNC'), '/j.db');
    assert.equal(e?.code, 'LB_DB_IO');
    assert.doesNotMatch(e?.message ?? '', /Nothing journaled was lost/);
    assert.match(e?.message ?? '', /may not have reached the disk.*nothing the script was told is lost/);
  });

  it('other I/O errors keep saying nothing journaled was lost', () => {
    assert.match(storageError(sqliteFailure('SQLITE_IOERR_READ'), '/j.db')?.message ?? '', /Nothing journaled was lost/);
    assert.match(storageError(sqliteFailure('SQLITE_FULL'), '/j.db')?.message ?? '', /Nothing journaled was lost/);
  });
});
