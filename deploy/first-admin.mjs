#!/usr/bin/env node
// One-shot set-up of a coordinator in builtin auth mode (docker-compose.yml's `setup` service):
// creates the first admin from SVC_ADMIN_USERNAME / SVC_ADMIN_PASSWORD (POST /auth/setup), and,
// when SVC_METRICS_KEY_FILE is set, writes an API key (viewer) there for Prometheus to scrape
// /metrics with. Safe to run on every `docker compose up`: once an admin exists it only makes
// sure the key file holds a working key. Never prints a password, token or key.
//
//   SVC_SERVER_URL=http://coordinator:8080/api/v1 SVC_ADMIN_USERNAME=admin SVC_ADMIN_PASSWORD=... \
//   SVC_METRICS_KEY_FILE=/app/secrets/prometheus-api-key node deploy/first-admin.mjs
//
// Exit status: 0 when the admin exists and the key file (if asked for) works; 1 otherwise, with why.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const KEY_NAME = 'prometheus';
const server = (process.env.SVC_SERVER_URL || 'http://coordinator:8080/api/v1').replace(/\/+$/, '');
const username = process.env.SVC_ADMIN_USERNAME || '';
const password = process.env.SVC_ADMIN_PASSWORD || '';
const keyFile = process.env.SVC_METRICS_KEY_FILE || '';

class SetupError extends Error {}

/** @typedef {{ code?: string, message?: string, token?: string, key?: string, apiKeys?: Array<{ id: string, name: string }> }} Body */
/** @typedef {{ status: number, json: Body }} Answer */

/**
 * @param {string} method
 * @param {string} path
 * @param {{ token?: string, body?: unknown }} [options]
 * @returns {Promise<Answer>}
 */
async function call(method, path, { token, body } = {}) {
  const headers = { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) };
  const res = await fetch(server + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  /** @type {Body} */
  let json = {};
  try {
    json = text === '' ? {} : /** @type {Body} */ (JSON.parse(text));
  } catch {
    json = {};
  }
  return { status: res.status, json };
}

/**
 * @param {string} what
 * @param {Answer} answer
 */
function refused(what, answer) {
  return new SetupError(`${what}: HTTP ${answer.status} ${answer.json.code ?? ''} ${answer.json.message ?? ''}`.trim());
}

/**
 * The admin's token when this run created the admin; undefined when an admin existed already.
 * @returns {Promise<string | undefined>}
 */
async function setUp() {
  const answer = await call('POST', '/auth/setup', { body: { username, password } });
  if (answer.status === 200) {
    console.log(`created the first admin "${username}"`);
    return answer.json.token;
  }
  if (answer.status === 403) {
    console.log('an admin exists already: setup skipped');
    return undefined;
  }
  throw refused('POST /auth/setup', answer);
}

async function keyFileWorks() {
  if (!existsSync(keyFile)) return false;
  const key = readFileSync(keyFile, 'utf8').trim();
  return key !== '' && (await call('GET', '/metrics', { token: key })).status === 200;
}

/** @returns {Promise<string | undefined>} */
async function logIn() {
  const answer = await call('POST', '/auth/login', { body: { username, password } });
  if (answer.status !== 200) throw refused(`POST /auth/login as "${username}" (was the password changed? then make the key by hand, see README)`, answer);
  return answer.json.token;
}

/**
 * A new viewer key named `prometheus`, replacing one of that name whose secret was lost.
 * @param {string | undefined} token
 * @returns {Promise<string>}
 */
async function issueKey(token) {
  let made = await call('POST', '/api-keys', { token, body: { name: KEY_NAME, description: 'Prometheus scrapes /metrics (docker-compose setup)', role: 'viewer' } });
  if (made.status === 409) {
    const listed = await call('GET', '/api-keys', { token });
    const old = (listed.json.apiKeys ?? []).find((k) => k.name === KEY_NAME);
    if (old !== undefined) await call('DELETE', `/api-keys/${encodeURIComponent(old.id)}`, { token });
    made = await call('POST', '/api-keys', { token, body: { name: KEY_NAME, role: 'viewer' } });
  }
  if (made.status !== 201 || made.json.key === undefined) throw refused('POST /api-keys', made);
  return made.json.key;
}

async function main() {
  if (username === '' || password === '') throw new SetupError('set SVC_ADMIN_USERNAME and SVC_ADMIN_PASSWORD (for example in .env)');
  let token = await setUp();
  if (keyFile === '') return;
  if (await keyFileWorks()) {
    console.log(`${keyFile} holds a working API key`);
    return;
  }
  token ??= await logIn();
  // Readable by Prometheus, which runs as another user in its own container; the volume is shared with it only.
  writeFileSync(keyFile, `${await issueKey(token)}\n`, { mode: 0o644 });
  console.log(`wrote a new API key "${KEY_NAME}" (role viewer) to ${keyFile}`);
}

try {
  await main();
} catch (error) {
  console.error(`first-admin: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
