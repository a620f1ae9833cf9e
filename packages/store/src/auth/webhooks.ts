import type { Queryable } from '../db/types.js';
import { NameTakenError } from './unique.js';

export interface WebhookRecord {
  id: string;
  /** The DAG's file name: one webhook per DAG. */
  dagName: string;
  tokenPrefix: string;
  enabled: boolean;
  /** It has a signing secret: calls must be signed. */
  signatureRequired: boolean;
  /** Runtime profiles its callers may select (protected ones included). */
  profileAllowlist: string[];
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
}

/** What checking a call needs besides the record: the token's hash and the signing secret, if any. */
export interface WebhookCredential extends WebhookRecord {
  tokenHash: string;
  signingSecret: string | null;
}

export interface NewWebhook {
  id: string;
  dagName: string;
  tokenHash: string;
  tokenPrefix: string;
  signingSecret: string | null;
  profileAllowlist: string[];
  createdBy: string;
}

const COLUMNS = `id::text AS id, dag_name AS "dagName", token_prefix AS "tokenPrefix", enabled,
  signing_secret IS NOT NULL AS "signatureRequired", profile_allowlist AS "profileAllowlist", created_by AS "createdBy",
  created_at AS "createdAt", updated_at AS "updatedAt", last_used_at AS "lastUsedAt"`;

/** Throws NameTakenError when the DAG has a webhook already. */
export async function insertWebhook(q: Queryable, hook: NewWebhook): Promise<WebhookRecord> {
  const [row] = await q.query<WebhookRecord>(
    `INSERT INTO webhooks (id, dag_name, token_hash, token_prefix, signing_secret, profile_allowlist, created_by) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
     ON CONFLICT (dag_name) DO NOTHING RETURNING ${COLUMNS}`,
    [hook.id, hook.dagName, hook.tokenHash, hook.tokenPrefix, hook.signingSecret, JSON.stringify(hook.profileAllowlist), hook.createdBy],
  );
  if (row === undefined) throw new NameTakenError(`a webhook of ${hook.dagName}`);
  return row;
}

export async function listWebhooks(q: Queryable): Promise<WebhookRecord[]> {
  return q.query<WebhookRecord>(`SELECT ${COLUMNS} FROM webhooks ORDER BY dag_name`);
}

export async function getWebhook(q: Queryable, dagName: string): Promise<WebhookRecord | undefined> {
  const [row] = await q.query<WebhookRecord>(`SELECT ${COLUMNS} FROM webhooks WHERE dag_name = $1`, [dagName]);
  return row;
}

export async function getWebhookCredential(q: Queryable, dagName: string): Promise<WebhookCredential | undefined> {
  const [row] = await q.query<WebhookCredential>(
    `SELECT ${COLUMNS}, token_hash AS "tokenHash", signing_secret AS "signingSecret" FROM webhooks WHERE dag_name = $1`,
    [dagName],
  );
  return row;
}

/** A new token (and signing secret) for the DAG's webhook; undefined when it has none. */
export async function replaceWebhookToken(q: Queryable, dagName: string, token: { tokenHash: string; tokenPrefix: string; signingSecret: string | null }): Promise<WebhookRecord | undefined> {
  const [row] = await q.query<WebhookRecord>(
    `UPDATE webhooks SET token_hash = $2, token_prefix = $3, signing_secret = $4, updated_at = now() WHERE dag_name = $1 RETURNING ${COLUMNS}`,
    [dagName, token.tokenHash, token.tokenPrefix, token.signingSecret],
  );
  return row;
}

export async function setWebhookEnabled(q: Queryable, dagName: string, enabled: boolean): Promise<WebhookRecord | undefined> {
  const [row] = await q.query<WebhookRecord>(`UPDATE webhooks SET enabled = $2, updated_at = now() WHERE dag_name = $1 RETURNING ${COLUMNS}`, [dagName, enabled]);
  return row;
}

export async function setWebhookProfileAllowlist(q: Queryable, dagName: string, profiles: string[]): Promise<WebhookRecord | undefined> {
  const [row] = await q.query<WebhookRecord>(`UPDATE webhooks SET profile_allowlist = $2::jsonb, updated_at = now() WHERE dag_name = $1 RETURNING ${COLUMNS}`, [dagName, JSON.stringify(profiles)]);
  return row;
}

export async function deleteWebhook(q: Queryable, dagName: string): Promise<WebhookRecord | undefined> {
  const [row] = await q.query<WebhookRecord>(`DELETE FROM webhooks WHERE dag_name = $1 RETURNING ${COLUMNS}`, [dagName]);
  return row;
}

/** A call was accepted: one write, beside the run the call starts. */
export async function touchWebhook(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE webhooks SET last_used_at = now() WHERE id::text = $1', [id]);
}
