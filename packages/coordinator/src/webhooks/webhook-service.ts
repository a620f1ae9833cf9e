import { randomBytes, randomUUID } from 'node:crypto';
import type { Dag } from '@trellis/core';
import {
  deleteWebhook, getWebhook, getWebhookCredential, insertWebhook, listWebhooks, NameTakenError, replaceWebhookToken, setWebhookEnabled, setWebhookProfileAllowlist, touchWebhook,
  type Db, type WebhookRecord,
} from '@trellis/store';
import { recordAudit } from '../auth/audit.js';
import type { Principal } from '../auth/principal.js';
import { hashSecret, issueSecret, sameHash } from '../auth/secrets.js';
import type { RunService } from '../runs/run-service.js';
import type { ProfileService } from '../profiles/profile-service.js';
import { verifySignature, type SignatureHeaders } from './signature.js';
import { AlreadyExistsError, BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '@trellis/core';

export const WEBHOOK_TOKEN_PREFIX = 'svc_wh_';
const INVALID_TOKEN = 'Invalid or missing webhook token';

export interface WebhookView {
  id: string;
  dagName: string;
  tokenPrefix: string;
  enabled: boolean;
  signatureRequired: boolean;
  /** Runtime profiles its callers may select with X-Svc-Profile (protected ones too). */
  profileAllowlist: string[];
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  lastUsedAt?: string;
}

export interface IssuedWebhook {
  webhook: WebhookView;
  token: string;
  signingSecret?: string;
}

/** A stored definition: its text, and the DAG when it is valid. */
export interface WebhookDefinition {
  text: string;
  dag: Dag | undefined;
  errors: string[];
}

export interface WebhookServiceDeps {
  db: Db;
  runs: RunService;
  /** Whether a call may select a runtime profile (the webhook's allowlist). */
  profiles: Pick<ProfileService, 'mayUse'>;
  /** The stored definition of a DAG file, if there is one. */
  definition(fileName: string): Promise<WebhookDefinition | undefined>;
}

export interface WebhookCall {
  /** The `Authorization` header. */
  authorization: string | undefined;
  signature: SignatureHeaders;
  rawBody: Buffer;
  /**
   * The `X-Svc-Profile` header: a profile on the webhook's allowlist. None means the usual
   * default (`defaultProfile`, if configured), usable when on the allowlist or else under the
   * webhook's operator role: not when protected.
   */
  profileName?: string | undefined;
  dagRunId?: string | undefined;
  payload?: Record<string, unknown> | undefined;
}

/** One webhook per DAG: its management (admin), and the calls that start runs with its token. */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  async list(): Promise<WebhookView[]> {
    return (await listWebhooks(this.deps.db)).map(view);
  }

  async get(fileName: string): Promise<WebhookView> {
    return view(await this.require(fileName, () => getWebhook(this.deps.db, fileName)));
  }

  async create(actor: Principal, fileName: string, requireSignature: boolean, profileAllowlist: string[] = []): Promise<IssuedWebhook> {
    if ((await this.deps.definition(fileName)) === undefined) throw new NotFoundError('DAG not found', { fileName });
    const issued = newCredentials(requireSignature);
    let record: WebhookRecord;
    try {
      record = await insertWebhook(this.deps.db, { id: randomUUID(), dagName: fileName, ...issued.stored, profileAllowlist: unique(profileAllowlist), createdBy: actor.id });
    } catch (error) {
      if (error instanceof NameTakenError) throw new AlreadyExistsError(`${fileName} already has a webhook`, { fileName });
      throw error;
    }
    await this.audit(actor, 'webhook.created', record, `created the webhook of ${fileName}`, { signatureRequired: requireSignature, profileAllowlist: record.profileAllowlist });
    return { webhook: view(record), ...issued.shown };
  }

  /** A new token (and a new signing secret when calls are signed); the old ones stop working at once. */
  async regenerate(actor: Principal, fileName: string): Promise<IssuedWebhook> {
    const current = await this.require(fileName, () => getWebhook(this.deps.db, fileName));
    const issued = newCredentials(current.signatureRequired);
    const record = await this.require(fileName, () => replaceWebhookToken(this.deps.db, fileName, issued.stored));
    await this.audit(actor, 'webhook.regenerated', record, `regenerated the token of the webhook of ${fileName}`);
    return { webhook: view(record), ...issued.shown };
  }

  async toggle(actor: Principal, fileName: string, enabled: boolean): Promise<WebhookView> {
    const record = await this.require(fileName, () => setWebhookEnabled(this.deps.db, fileName, enabled));
    await this.audit(actor, enabled ? 'webhook.enabled' : 'webhook.disabled', record, `${enabled ? 'enabled' : 'disabled'} the webhook of ${fileName}`);
    return view(record);
  }

  /** Replaces the profiles the webhook's callers may select. */
  async setProfileAllowlist(actor: Principal, fileName: string, profiles: string[]): Promise<WebhookView> {
    const record = await this.require(fileName, () => setWebhookProfileAllowlist(this.deps.db, fileName, unique(profiles)));
    await this.audit(actor, 'webhook.profiles_set', record, `set the profile allowlist of the webhook of ${fileName}`, { profileAllowlist: record.profileAllowlist });
    return view(record);
  }

  async delete(actor: Principal, fileName: string): Promise<void> {
    const record = await this.require(fileName, () => deleteWebhook(this.deps.db, fileName));
    await this.audit(actor, 'webhook.deleted', record, `deleted the webhook of ${fileName}`);
  }

  /**
   * A call of `POST /webhooks/{fileName}`: 401 without the DAG's token (or a valid signature
   * when it signs), 404 without the webhook or the DAG, 403 while disabled; then a run queued
   * like every other (409 when `dagRunId` was used already), its steps seeing WEBHOOK_PAYLOAD.
   */
  async trigger(fileName: string, call: WebhookCall): Promise<{ dagRunId: string; dagName: string }> {
    const token = bearerToken(call.authorization);
    if (token === undefined) throw new UnauthorizedError(INVALID_TOKEN);
    const hook = await getWebhookCredential(this.deps.db, fileName);
    if (hook === undefined) throw new NotFoundError('Webhook not found', { fileName });
    if (!sameHash(hashSecret(token), hook.tokenHash)) throw new UnauthorizedError(INVALID_TOKEN);
    if (!hook.enabled) throw new ForbiddenError('Webhook is disabled', { fileName });
    if (hook.signingSecret !== null) verifySignature(hook.signingSecret, call.signature, call.rawBody);
    const definition = await this.deps.definition(fileName);
    if (definition === undefined) throw new NotFoundError('DAG not found', { fileName });
    if (definition.dag === undefined) throw new BadRequestError(`the DAG definition is invalid: ${definition.errors.join('; ')}`, { errors: definition.errors });
    const actor: Principal = { kind: 'webhook', id: hook.id, name: fileName, role: 'operator' };
    const profileName = this.deps.runs.profileOf(call.profileName);
    if (profileName !== undefined) await this.deps.profiles.mayUse(actor, profileName, { named: call.profileName !== undefined, allowlist: hook.profileAllowlist });
    const run = await this.deps.runs.enqueue({
      yaml: definition.text,
      fileName,
      dag: definition.dag,
      trigger: 'webhook',
      actor,
      runEnv: { WEBHOOK_PAYLOAD: JSON.stringify(call.payload ?? {}) },
      ...(call.profileName !== undefined ? { profileName: call.profileName } : {}),
      ...(call.dagRunId !== undefined ? { dagRunId: call.dagRunId } : {}),
    });
    await touchWebhook(this.deps.db, hook.id);
    await recordAudit(this.deps.db, actor, { type: 'webhook.triggered', message: `started run ${run.dagRunId} of ${run.dagName}`, dagName: run.dagName, dagRunId: run.dagRunId, data: { webhookId: hook.id, ...(call.profileName !== undefined ? { profile: call.profileName } : {}) } });
    return { dagRunId: run.dagRunId, dagName: run.dagName };
  }

  private async require(fileName: string, read: () => Promise<WebhookRecord | undefined>): Promise<WebhookRecord> {
    const record = await read();
    if (record === undefined) throw new NotFoundError('Webhook not found', { fileName });
    return record;
  }

  private audit(actor: Principal, type: string, record: WebhookRecord, message: string, data: Record<string, unknown> = {}): Promise<void> {
    return recordAudit(this.deps.db, actor, { type, message, dagName: record.dagName, data: { webhookId: record.id, ...data } });
  }
}

function unique(names: string[]): string[] {
  return [...new Set(names)].sort();
}

function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const token = match?.[1];
  return token?.startsWith(WEBHOOK_TOKEN_PREFIX) === true ? token : undefined;
}

function newCredentials(signed: boolean): { stored: { tokenHash: string; tokenPrefix: string; signingSecret: string | null }; shown: { token: string; signingSecret?: string } } {
  const token = issueSecret(WEBHOOK_TOKEN_PREFIX);
  const signingSecret = signed ? randomBytes(32).toString('hex') : null;
  return {
    stored: { tokenHash: token.hash, tokenPrefix: token.prefix, signingSecret },
    shown: { token: token.secret, ...(signingSecret !== null ? { signingSecret } : {}) },
  };
}

function view(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    dagName: record.dagName,
    tokenPrefix: record.tokenPrefix,
    enabled: record.enabled,
    signatureRequired: record.signatureRequired,
    profileAllowlist: record.profileAllowlist,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    createdBy: record.createdBy,
    ...(record.lastUsedAt !== null ? { lastUsedAt: record.lastUsedAt.toISOString() } : {}),
  };
}
