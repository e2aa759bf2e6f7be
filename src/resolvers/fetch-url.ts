/**
 * Fetch a document named by URL, for createParseJob(url:) when the operator turns URL input on. Only https;
 * the host must resolve to public unicast addresses only (no private, loopback, link-local, CGNAT, multicast or
 * reserved ranges), and the connection goes to the address that was checked, so DNS cannot be re-bound between
 * the check and the request. Redirects are followed a few times, each one checked the same way; the body is cut
 * off at the size limit and the whole fetch at the time limit.
 */
import { lookup } from 'node:dns/promises';
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { apiError } from './errors.js';
import type { UrlFetcher } from './context.js';

const MAX_REDIRECTS = 3;

/** Why an address may not be fetched, or null when it is public unicast. */
export function refusedAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  if (range !== 'unicast') return range;
  // IPv6: only global unicast (2000::/3); everything else, IPv4-compatible forms included, is refused.
  if (ip.kind() === 'ipv6') {
    const first = (ip as ipaddr.IPv6).parts[0];
    if (first < 0x2000 || first > 0x3fff) return 'not global unicast';
  }
  return null;
}

async function publicAddress(host: string): Promise<{ address: string; family: number }> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addrs: { address: string; family: number }[];
  try {
    addrs = ipaddr.isValid(bare)
      ? [{ address: bare, family: ipaddr.parse(bare).kind() === 'ipv6' ? 6 : 4 }]
      : await lookup(bare, { all: true });
  } catch {
    addrs = [];
  }
  // One answer for "does not resolve" and "resolves somewhere private": the API must not map internal DNS.
  if (!addrs.length || addrs.some((a) => refusedAddress(a.address) !== null)) {
    throw apiError('URL_REFUSED', `"${host}" is not a public address that can be fetched`);
  }
  return addrs[0];
}

function parseHttps(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw apiError('BAD_USER_INPUT', `"${raw.slice(0, 200)}" is not a URL`);
  }
  if (url.protocol !== 'https:') throw apiError('URL_REFUSED', `only https URLs are fetched, not ${url.protocol}`);
  if (url.username || url.password) throw apiError('URL_REFUSED', 'URLs with credentials are not fetched');
  return url;
}

function fetchOnce(
  url: URL,
  pinned: { address: string; family: number },
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ status: number; location?: string; bytes?: Uint8Array }> {
  const pin: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', lookup: pin, signal, headers: { 'user-agent': 'specula-fetch/1', accept: '*/*' } },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          resolve({ status, location: res.headers.location });
          return;
        }
        if (status !== 200) {
          res.resume();
          reject(apiError('URL_FETCH_FAILED', `${url.host} answered HTTP ${status}`));
          return;
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > maxBytes) {
          res.destroy();
          reject(
            apiError('UPLOAD_TOO_LARGE', `the document at the URL is ${declared} bytes; the limit is ${maxBytes}`, {
              limit: maxBytes,
            }),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            res.destroy();
            reject(
              apiError('UPLOAD_TOO_LARGE', `the document at the URL is over the ${maxBytes}-byte limit`, {
                limit: maxBytes,
              }),
            );
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => resolve({ status, bytes: new Uint8Array(Buffer.concat(chunks)) }));
        res.on('error', (e) =>
          reject(
            apiError(
              'URL_FETCH_FAILED',
              `reading the document from the URL failed (${(e as NodeJS.ErrnoException).code ?? 'connection error'})`,
            ),
          ),
        );
      },
    );
    req.on('error', (e) =>
      reject(
        signal.aborted
          ? apiError('URL_FETCH_FAILED', 'fetching the URL took too long')
          : apiError('URL_FETCH_FAILED', `fetching the URL failed (${(e as NodeJS.ErrnoException).code ?? e.message})`),
      ),
    );
    req.end();
  });
}

export function urlFetcher(timeoutMs: number): UrlFetcher {
  return async (raw, maxBytes) => {
    const signal = AbortSignal.timeout(timeoutMs);
    let url = parseHttps(raw);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const pinned = await publicAddress(url.hostname);
      const res = await fetchOnce(url, pinned, maxBytes, signal);
      if (res.bytes) {
        const last = url.pathname.split('/').pop() || '';
        let name: string;
        try {
          name = decodeURIComponent(last);
        } catch {
          name = last; // not valid percent-encoding: keep it as sent
        }
        name = name.slice(0, 255) || 'document';
        return { bytes: res.bytes, fileName: name };
      }
      let next: string;
      try {
        next = new URL(res.location as string, url).toString();
      } catch {
        throw apiError('URL_FETCH_FAILED', 'the URL redirected to a malformed address');
      }
      url = parseHttps(next);
    }
    throw apiError('URL_FETCH_FAILED', `more than ${MAX_REDIRECTS} redirects`);
  };
}
