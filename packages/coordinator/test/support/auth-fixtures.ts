import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';

/** A vendor key pair and a license signed with it, as the operator would configure them. */
export function mintLicense(expiresIn: number | string = '1h'): { license: string; licensePublicKey: string; otherPublicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const license = jwt.sign({ plan: 'pro', customer: 'tests' }, privateKey.export({ type: 'pkcs8', format: 'pem' }), { algorithm: 'RS256', expiresIn: expiresIn as jwt.SignOptions['expiresIn'] });
  return { license, licensePublicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(), otherPublicKey: other.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

export interface Answer {
  status: number;
  json: Record<string, unknown>;
  headers: Headers;
}

/** One API call with an Authorization header (or none); event streams are closed once their status is known. */
export async function callWith(apiUrl: string, method: string, path: string, authorization?: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const controller = new AbortController();
  const res = await fetch(apiUrl + path, { method, headers, signal: controller.signal, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, json: {}, headers: res.headers };
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    json = { text };
  }
  return { status: res.status, json, headers: res.headers };
}

export const bearer = (token: string): string => `Bearer ${token}`;
export const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
