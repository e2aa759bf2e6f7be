import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ApiKeys, digest } from '../src/server/auth.js';
import { ConfigError, configFromEnv } from '../src/server/config.js';

describe('API keys map to tenants', () => {
  it('accepts keys from the environment and hashed keys from a file, and nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'specula-keys-'));
    const file = join(dir, 'keys');
    writeFileSync(file, `# tenants\nglobex:sha256:${digest('globex-secret')}\n\ninitech:plain-key\n`);
    const keys = ApiKeys.fromConfig({ apiKeys: 'acme:acme-secret', apiKeysFile: file, allowAnonymous: false });
    assert.deepEqual(keys.authenticate('Bearer acme-secret'), { ok: true, tenant: 'acme' });
    assert.deepEqual(keys.authenticate('bearer globex-secret'), { ok: true, tenant: 'globex' });
    assert.deepEqual(keys.authenticate('Bearer plain-key'), { ok: true, tenant: 'initech' });
    assert.deepEqual(
      keys.authenticate(`Bearer ${digest('globex-secret')}`),
      { ok: false, reason: 'unknown' },
      'the digest is not a key',
    );
    assert.deepEqual(keys.authenticate('Basic abc'), { ok: false, reason: 'malformed' });
    assert.deepEqual(keys.authenticate(undefined), { ok: false, reason: 'missing' });
  });

  it('allows keyless use only when told to, as the anonymous tenant', () => {
    const keys = ApiKeys.fromConfig({ apiKeys: '', allowAnonymous: true });
    assert.deepEqual(keys.authenticate(undefined), { ok: true, tenant: 'anonymous' });
    assert.throws(() => ApiKeys.fromConfig({ apiKeys: '', allowAnonymous: false }), ConfigError);
    assert.throws(() => ApiKeys.fromConfig({ apiKeys: 'anonymous:x', allowAnonymous: false }), /reserved/);
    assert.throws(() => ApiKeys.fromConfig({ apiKeys: 'no-colon', allowAnonymous: false }), ConfigError);
  });

  it('refuses bad settings naming the variable', () => {
    assert.throws(() => configFromEnv({ PORT: 'eighty' }), /PORT/);
    assert.throws(() => configFromEnv({ SPECULA_DEVICE: 'tpu' }), /SPECULA_DEVICE/);
    assert.equal(configFromEnv({}).port, 4000);
  });
});
