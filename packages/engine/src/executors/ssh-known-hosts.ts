import { createHash, createHmac } from 'node:crypto';

/**
 * OpenSSH `known_hosts` matching: plain and hashed (`|1|salt|hash`) host names, `[host]:port`
 * for ports other than 22, `*`/`?` patterns, `!` negation and `@revoked` lines.
 * `@cert-authority` lines are skipped: the ssh step trusts host keys, not host certificates.
 */

interface Entry {
  marker?: string;
  patterns: string[];
  key: string;
}

function parseLine(line: string): Entry | undefined {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return undefined;
  const fields = text.split(/\s+/);
  const marker = fields[0]?.startsWith('@') === true ? fields.shift() : undefined;
  const [hosts, , key] = fields;
  if (hosts === undefined || key === undefined) return undefined;
  return { ...(marker !== undefined ? { marker } : {}), patterns: hosts.split(','), key };
}

function globMatches(pattern: string, name: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i').test(name);
}

function hashedMatches(pattern: string, name: string): boolean {
  const [, kind, salt, hash] = pattern.split('|');
  if (kind !== '1' || salt === undefined || hash === undefined) return false;
  return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
}

function hostMatches(patterns: string[], name: string): boolean {
  let matched = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const body = negated ? pattern.slice(1) : pattern;
    const hit = body.startsWith('|') ? hashedMatches(body, name) : globMatches(body, name);
    if (hit && negated) return false;
    if (hit) matched = true;
  }
  return matched;
}

/** How known_hosts names a host: `[host]:port` unless the port is 22. */
export function knownHostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** `SHA256:...` as `ssh-keygen -l` prints it. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** Whether `key` (the raw public key blob the server offered) is known and not revoked for `name`. */
export function isKnownHostKey(knownHosts: string, name: string, key: Buffer): boolean {
  const blob = key.toString('base64');
  const entries = knownHosts.split('\n').flatMap((line) => parseLine(line) ?? []);
  if (entries.some((e) => e.marker === '@revoked' && e.key === blob)) return false;
  return entries.some((e) => e.marker === undefined && e.key === blob && hostMatches(e.patterns, name));
}
