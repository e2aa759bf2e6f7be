/**
 * API keys → tenants. Keys are held only as SHA-256 digests: a leaked heap dump or keys file (which may list
 * `tenant:sha256:<hex>` instead of the key) does not leak a usable key. Lookup is by digest, so comparing
 * never leaks timing about a key's characters.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.js';

export const ANONYMOUS_TENANT = 'anonymous';

export const digest = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export type AuthResult = { ok: true; tenant: string } | { ok: false; reason: 'missing' | 'malformed' | 'unknown' };

export class ApiKeys {
  private readonly tenants = new Map<string, string>(); // digest → tenant

  constructor(
    entries: readonly string[],
    readonly allowAnonymous: boolean,
  ) {
    for (const raw of entries) {
      const entry = raw.trim();
      if (!entry || entry.startsWith('#')) continue;
      const i = entry.indexOf(':');
      const tenant = entry.slice(0, i).trim();
      const rest = entry.slice(i + 1).trim();
      if (i <= 0 || !rest || !/^[\w.-]{1,64}$/.test(tenant)) {
        throw new ConfigError(
          `an API key entry must be "tenant:key" or "tenant:sha256:<hex>" ` +
            `(tenant: letters, digits, . _ -), got "${entry.slice(0, 24)}…"`,
        );
      }
      if (tenant === ANONYMOUS_TENANT) throw new ConfigError(`"${ANONYMOUS_TENANT}" is reserved for keyless local use`);
      const hashed = /^sha256:([0-9a-f]{64})$/i.exec(rest);
      this.tenants.set(hashed ? hashed[1].toLowerCase() : digest(rest), tenant);
    }
  }

  /** From `SPECULA_API_KEYS` ("tenant:key,tenant:key") and/or a keys file (one entry per line, # comments). */
  static fromConfig(c: { apiKeys: string; apiKeysFile?: string; allowAnonymous: boolean }): ApiKeys {
    const entries = c.apiKeys.split(',');
    if (c.apiKeysFile) {
      let text: string;
      try {
        text = readFileSync(c.apiKeysFile, 'utf8');
      } catch (e) {
        throw new ConfigError(`SPECULA_API_KEYS_FILE: cannot read ${c.apiKeysFile} (${(e as Error).message})`);
      }
      entries.push(...text.split(/\r?\n/));
    }
    const keys = new ApiKeys(entries, c.allowAnonymous);
    if (keys.size === 0 && !c.allowAnonymous) {
      throw new ConfigError(
        'no API keys: set SPECULA_API_KEYS ("tenant:key,...") or ' +
          'SPECULA_API_KEYS_FILE, or SPECULA_ALLOW_ANONYMOUS=1 for keyless local ' +
          'use',
      );
    }
    return keys;
  }

  get size(): number {
    return this.tenants.size;
  }

  /** An `Authorization` header value (or a graphql-ws connection parameter) → the tenant it names. */
  authenticate(authorization: string | null | undefined): AuthResult {
    if (!authorization)
      return this.allowAnonymous ? { ok: true, tenant: ANONYMOUS_TENANT } : { ok: false, reason: 'missing' };
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) return { ok: false, reason: 'malformed' };
    const tenant = this.tenants.get(digest(m[1]));
    return tenant ? { ok: true, tenant } : { ok: false, reason: 'unknown' };
  }
}
