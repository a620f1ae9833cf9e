import { randomUUID } from 'node:crypto';
import {
  deleteApiKey, getApiKey, insertApiKey, listApiKeyCredentials, listApiKeys, NameTakenError, touchApiKeys, updateApiKey,
  type ApiKeyChange, type ApiKeyRecord, type Db,
} from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { recordAudit } from './audit.js';
import type { Principal, Role } from './principal.js';
import { hashSecret, issueSecret } from './secrets.js';
import { AlreadyExistsError, NotFoundError, toError } from '@trellis/core';

/** The roles a key may carry (the contract leaves developer to users). */
export const API_KEY_ROLES = ['admin', 'manager', 'operator', 'viewer'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

export const API_KEY_PREFIX = 'svc_';
const WEBHOOK_PREFIX = 'svc_wh_';

export interface ApiKeyView {
  id: string;
  name: string;
  description: string;
  role: string;
  keyPrefix: string;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  lastUsedAt?: string;
}

export interface ApiKeyServiceOptions {
  db: Db;
  logger: Logger;
  /** How stale the in-memory copy of the keys may be: a key deleted or changed on another coordinator stops working within this. */
  cacheMs?: number;
  /** How often last-use times are written. */
  flushMs?: number;
}

interface CachedKey {
  principal: Principal;
}

/**
 * API keys: management, and the check of `Bearer svc_...` on every request. The check costs a
 * SHA-256 and a map lookup: the keys are held in memory (re-read when older than `cacheMs`, or at
 * most once a second when an unknown key shows up, so a key made on another coordinator works
 * at once) and last-use times are written in batches.
 */
export class ApiKeyService {
  private byHash = new Map<string, CachedKey>();
  private loadedAt = 0;
  /** Bumped by every change made here: a read that began before it must not count as fresh. */
  private generation = 0;
  private loading: { read: Promise<void>; generation: number } | undefined;
  private appliedGeneration = 0;
  private readonly used = new Map<string, Date>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly cacheMs: number;

  constructor(private readonly options: ApiKeyServiceOptions) {
    this.cacheMs = options.cacheMs ?? 2000;
    this.flushTimer = setInterval(() => void this.flush(), options.flushMs ?? 10_000);
    this.flushTimer.unref();
  }

  /** The principal of a `svc_` key (not a `svc_wh_` webhook token); undefined for any other or unknown token. */
  async authenticateApiKey(token: string): Promise<Principal | undefined> {
    if (!token.startsWith(API_KEY_PREFIX) || token.startsWith(WEBHOOK_PREFIX)) return undefined;
    const hash = hashSecret(token);
    const age = Date.now() - this.loadedAt;
    if (age > this.cacheMs || (!this.byHash.has(hash) && age > 1000)) await this.reload();
    const found = this.byHash.get(hash);
    if (found === undefined) return undefined;
    this.used.set(found.principal.id, new Date());
    return found.principal;
  }

  async list(): Promise<ApiKeyView[]> {
    return (await listApiKeys(this.options.db)).map((key) => this.view(key));
  }

  async get(id: string): Promise<ApiKeyView> {
    return this.view(await this.require(id));
  }

  async create(actor: Principal, input: { name: string; description?: string | undefined; role: ApiKeyRole }): Promise<{ apiKey: ApiKeyView; key: string }> {
    const issued = issueSecret(API_KEY_PREFIX);
    const record = await this.named(input.name, () =>
      insertApiKey(this.options.db, { id: randomUUID(), name: input.name, description: input.description ?? '', role: input.role, keyHash: issued.hash, keyPrefix: issued.prefix, createdBy: actor.id }),
    );
    this.invalidate();
    await recordAudit(this.options.db, actor, { type: 'api_key.created', message: `created API key ${record.name}`, data: { apiKeyId: record.id, name: record.name, role: record.role } });
    return { apiKey: this.view(record), key: issued.secret };
  }

  async update(actor: Principal, id: string, change: ApiKeyChange): Promise<ApiKeyView> {
    const record = await this.named(change.name ?? '', () => updateApiKey(this.options.db, id, change));
    if (record === undefined) throw new NotFoundError('API key not found', { keyId: id });
    this.invalidate();
    await recordAudit(this.options.db, actor, { type: 'api_key.updated', message: `updated API key ${record.name}`, data: { apiKeyId: id, changed: Object.keys(change), name: record.name, role: record.role } });
    return this.view(record);
  }

  async delete(actor: Principal, id: string): Promise<void> {
    const record = await deleteApiKey(this.options.db, id);
    if (record === undefined) throw new NotFoundError('API key not found', { keyId: id });
    this.invalidate();
    this.used.delete(id);
    await recordAudit(this.options.db, actor, { type: 'api_key.deleted', message: `deleted API key ${record.name}`, data: { apiKeyId: id, name: record.name } });
  }

  /** Writes pending last-use times and stops the timer. */
  async stop(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flush();
  }

  /** Writes the last-use times gathered since the previous flush; kept for the next one when the write fails. */
  async flush(): Promise<void> {
    if (this.used.size === 0) return;
    const batch = new Map(this.used);
    this.used.clear();
    try {
      await touchApiKeys(this.options.db, batch);
    } catch (error) {
      for (const [id, at] of batch) if (!this.used.has(id)) this.used.set(id, at);
      this.options.logger.warn('could not record API key use', { error: toError(error) });
    }
  }

  private async require(id: string): Promise<ApiKeyRecord> {
    const record = await getApiKey(this.options.db, id);
    if (record === undefined) throw new NotFoundError('API key not found', { keyId: id });
    return record;
  }

  private async named<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof NameTakenError) throw new AlreadyExistsError(`an API key named ${name} already exists`, { name });
      throw error;
    }
  }

  private invalidate(): void {
    this.generation += 1;
    this.loadedAt = 0;
  }

  /**
   * One read at a time: concurrent requests with a stale copy wait for the same read, unless a
   * change was made here since it began (then a new read; an older one finishing later is ignored).
   */
  private reload(): Promise<void> {
    if (this.loading !== undefined && this.loading.generation === this.generation) return this.loading.read;
    const generation = this.generation;
    const read = listApiKeyCredentials(this.options.db)
      .then((keys) => {
        if (generation < this.appliedGeneration) return;
        this.appliedGeneration = generation;
        this.byHash = new Map(keys.map((key) => [key.keyHash, { principal: { kind: 'apiKey', id: key.id, name: key.name, role: key.role as Role } }]));
        if (generation === this.generation) this.loadedAt = Date.now();
      })
      .finally(() => {
        if (this.loading?.read === read) this.loading = undefined;
      });
    this.loading = { read, generation };
    return read;
  }

  private view(key: ApiKeyRecord): ApiKeyView {
    const lastUsed = this.used.get(key.id) ?? key.lastUsedAt;
    return {
      id: key.id,
      name: key.name,
      description: key.description,
      role: key.role,
      keyPrefix: key.keyPrefix,
      createdAt: key.createdAt.toISOString(),
      updatedAt: key.updatedAt.toISOString(),
      createdBy: key.createdBy,
      ...(lastUsed !== null ? { lastUsedAt: lastUsed.toISOString() } : {}),
    };
  }
}
