// The postgres:// helpers the extension relies on to keep passwords out of settings, command lines and logs.

import { strict as assert } from 'node:assert';
import { credentialKey, isPostgresUrl, urlHasPassword, urlPassword, urlUser, withUser, withoutPassword } from '../../src/shared/pgUrl';

describe('postgres URLs (shared/pgUrl)', () => {
  it('tells a URL from a file path', () => {
    assert.equal(isPostgresUrl('postgres://h/db'), true);
    assert.equal(isPostgresUrl('postgresql://h/db'), true);
    assert.equal(isPostgresUrl('.logbook/journal.db'), false);
    assert.equal(isPostgresUrl('/tmp/postgres://x'), false);
  });

  it('finds a password in the user part or as a parameter, and removes it', () => {
    assert.equal(urlHasPassword('postgres://ann:s3cr%40t@db.example:5433/logbook'), true);
    assert.equal(urlPassword('postgres://ann:s3cr%40t@db.example:5433/logbook'), 's3cr@t');
    assert.equal(urlHasPassword('postgres://ann@db.example/logbook?password=x&sslmode=require'), true);
    assert.equal(urlHasPassword('postgres://ann@db.example/logbook?sslmode=require'), false);
    assert.equal(urlHasPassword('postgres://ann@db.example/logbook'), false);
    const bare = withoutPassword('postgres://ann:s3cr%40t@db.example:5433/logbook?password=y&sslmode=require');
    assert.equal(urlHasPassword(bare), false);
    assert.equal(bare, 'postgres://ann@db.example:5433/logbook?sslmode=require');
  });

  it('swaps the user for the read-only role, and keys credentials by role, server and database', () => {
    assert.equal(withUser('postgres://ann@db.example:5433/logbook', 'viewer'), 'postgres://viewer@db.example:5433/logbook');
    assert.equal(urlUser('postgres://viewer@h/db', {}), 'viewer');
    assert.equal(urlUser('postgres://h/db', { PGUSER: 'bob' }), 'bob');
    assert.equal(urlUser('postgres://h/db', {}), undefined);
    assert.equal(credentialKey('postgres://ann@db.example/logbook', {}), 'postgres://ann@db.example:5432/logbook');
    assert.notEqual(credentialKey('postgres://ann@h/db', {}), credentialKey('postgres://viewer@h/db', {}));
    assert.doesNotMatch(credentialKey('postgres://ann:pw@h/db', {}), /pw/);
  });
});
