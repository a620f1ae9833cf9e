import { randomUUID } from 'node:crypto';
import { AlreadyExistsError, BadRequestError, ForbiddenError, NotFoundError } from '@trellis/core';
import {
  deleteEntry, deleteProfile, ensureDefaultsLayer, getEntry, getLayer, getSealedSecrets, getSyncConfig, getWorkspaceByName, insertProfile, listEntries, listProfiles, NameTakenError, profilesVersion,
  putSecret, putVariable, resealSecret, resealSecretParams, resealSyncToken, secretCountsByKey, secretParamsCountsByKey, secretParamsSealedWith, secretsSealedWith, updateProfile,
  type Db, type LayerRef, type ProfileEntryMeta, type Queryable, type ProfileChange, type ProfileEntryRecord, type ProfileRecord,
} from '@trellis/store';
import { recordAudit } from '../auth/audit.js';
import { runInputsAad } from '../runs/masked-params.js';
import { roleGrants } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { SecretKeyring } from './secret-keyring.js';
import { SYNC_TOKEN_SECRET_ID } from '../sync/sync-token-id.js';
import { EffectiveEntriesCache, pairKey, type EffectiveEntries, type EffectiveEntry } from './effective-entries-cache.js';

/** Where a request points: a named profile, the Global defaults, or a workspace's defaults (by workspace name). */
export type LayerAddress = { scope: 'profile'; name: string } | { scope: 'global' } | { scope: 'workspace'; workspaceName: string };

export interface ProfileEntryView {
  key: string;
  kind: 'variable' | 'secret';
  /** Variables only: secrets are write-only. */
  value?: string;
  /** Secrets only: the id of the sealed value backing it. */
  secretId?: string;
  updatedAt: string;
}

export interface ProfileView {
  /** The profile's name; `_global`, or `_workspaces/<workspace>` for defaults layers. */
  name: string;
  scope: 'global' | 'workspace' | 'profile';
  workspace?: string;
  description: string;
  status: 'active' | 'disabled';
  protected: boolean;
  entries: ProfileEntryView[];
  /** Omitted for a defaults layer nothing was ever written to. */
  createdAt?: string;
  updatedAt?: string;
}

/** One effective entry for a run: which layer it came from, and its value (in memory only). */
export interface ResolvedEntry {
  key: string;
  kind: 'variable' | 'secret';
  layer: 'global' | 'workspace' | 'profile';
  value: string;
}

/** What a run resolves against: its DAG's workspace (label `workspace=<name>`) and its selected profile. */
export interface ResolveInput {
  workspaceName?: string | undefined;
  profileName?: string | undefined;
}

export interface ResolvedProfile {
  /** The selected profile, when one was. */
  profileName?: string;
  /** Later layers win per key: Global, then the workspace's, then the profile's. */
  entries: ResolvedEntry[];
}

/** How a start came to its profile: named by the caller or the configured default; through a webhook or not. */
export interface ProfileSelection {
  /** Whether the caller named the profile, rather than taking the configured default (`defaultProfile`). */
  named: boolean;
  /** A webhook call's: the webhook's profile allowlist. */
  allowlist?: readonly string[];
}

export interface RotationResult {
  keyId: string;
  reencrypted: number;
  /** Values still sealed under other keys (key id -> count): keys this coordinator does not hold. */
  remaining: Record<string, number>;
}

const ROTATION_BATCH = 100;

function layerName(address: LayerAddress): string {
  return address.scope === 'profile' ? address.name : address.scope === 'global' ? '_global' : `_workspaces/${address.workspaceName}`;
}

/**
 * Runtime profiles and their defaults layers: management under the contract's role rules, the
 * sealed secret store, key rotation, and what a run start asks for (`mayUse`, `resolve`).
 * Rules: only admins create, view, change, delete or use protected profiles; admins and
 * managers manage the rest and the defaults layers (the route permission `profiles:manage`);
 * callers with run permission may use active non-protected profiles; a webhook may use any
 * active profile on its allowlist.
 */
export class ProfileService {
  /** Resolved entries kept while the database's profile counter stands still: a run start costs no read then. */
  private readonly effectiveEntries = new EffectiveEntriesCache();

  constructor(
    private readonly db: Db,
    private readonly keyring: SecretKeyring,
  ) {}

  /** Named profiles the caller may see (protected ones only for admins). */
  async list(actor: Principal): Promise<ProfileView[]> {
    const records = (await listProfiles(this.db)).filter((p) => !p.protected || actor.role === 'admin');
    const entries = await listEntries(this.db, records.map((p) => p.id));
    return records.map((p) => view(p, { scope: 'profile', name: p.name ?? '' }, entries.filter((e) => e.profileId === p.id)));
  }

  async get(actor: Principal, address: LayerAddress): Promise<ProfileView> {
    const record = await this.find(address);
    if (record === undefined) {
      if (address.scope === 'profile') throw notFound(address.name);
      return emptyLayer(address);
    }
    guardProtected(actor, record, 'view');
    return view(record, address, await listEntries(this.db, [record.id]));
  }

  async create(actor: Principal, input: { name: string; description?: string | undefined; protected?: boolean | undefined }): Promise<ProfileView> {
    if (input.protected === true && actor.role !== 'admin') throw protectedOnly(input.name, 'create');
    let record: ProfileRecord;
    try {
      record = await insertProfile(this.db, { id: randomUUID(), name: input.name, description: input.description ?? '', protected: input.protected ?? false, createdBy: actor.id });
    } catch (error) {
      if (error instanceof NameTakenError) throw new AlreadyExistsError(`a profile named ${input.name} already exists`, { name: input.name });
      throw error;
    }
    await this.audit(actor, 'profile.created', record.name ?? '', { protected: record.protected });
    return view(record, { scope: 'profile', name: input.name }, []);
  }

  /** Defaults layers take only a description; status and protection belong to named profiles. */
  async update(actor: Principal, address: LayerAddress, change: ProfileChange): Promise<ProfileView> {
    if (address.scope !== 'profile' && (change.status !== undefined || change.protected !== undefined)) throw new BadRequestError('defaults layers have only a description: status and protected apply to named profiles');
    const record = await this.writable(actor, address, 'update');
    if (change.protected !== undefined && change.protected !== record.protected && actor.role !== 'admin') throw protectedOnly(layerName(address), 'update');
    await updateProfile(this.db, record.id, change);
    await this.audit(actor, 'profile.updated', layerName(address), { changed: Object.keys(change), ...change });
    return this.get(actor, address);
  }

  async delete(actor: Principal, name: string): Promise<void> {
    const record = await this.writable(actor, { scope: 'profile', name }, 'delete');
    await deleteProfile(this.db, record.id);
    await this.audit(actor, 'profile.deleted', name, {});
  }

  async setVariable(actor: Principal, address: LayerAddress, key: string, value: string): Promise<ProfileEntryView> {
    const record = await this.writable(actor, address, 'update');
    const entry = await this.db.transaction((tx) => putVariable(tx, record.id, key, value, actor.id));
    await this.audit(actor, 'profile.variable_set', layerName(address), { key });
    return entryView(entry);
  }

  /** Sets or replaces a secret; the value is sealed before it reaches the database and is never returned. */
  async setSecret(actor: Principal, address: LayerAddress, key: string, value: string): Promise<ProfileEntryView> {
    const record = await this.writable(actor, address, 'update');
    const entry = await this.db.transaction(async (tx) => {
      const secretId = (await getEntry(tx, record.id, key))?.secretId ?? randomUUID();
      return putSecret(tx, record.id, key, secretId, this.keyring.seal(value, secretId), actor.id);
    });
    await this.audit(actor, 'profile.secret_set', layerName(address), { key, secretId: entry.secretId });
    return entryView(entry);
  }

  async deleteEntry(actor: Principal, address: LayerAddress, key: string): Promise<void> {
    const record = await this.writable(actor, address, 'update');
    if (!(await this.db.transaction((tx) => deleteEntry(tx, record.id, key)))) throw new NotFoundError(`${layerName(address)} has no entry ${key}`, { key });
    await this.audit(actor, 'profile.entry_deleted', layerName(address), { key });
  }

  /**
   * Whether `actor` may start a run with profile `name`, and the profile when so: run
   * permission, and the admin role for a protected profile, whether the caller named it or it
   * is the configured default. A webhook call may also use any profile on its webhook's
   * allowlist (protected ones too), and a profile it names (`X-Svc-Profile`) must be on it.
   */
  async mayUse(actor: Principal, name: string, selection: ProfileSelection = { named: true }): Promise<ProfileRecord> {
    const record = await getLayer(this.db, { scope: 'profile', name });
    if (selection.allowlist?.includes(name) !== true) {
      if (selection.allowlist !== undefined && selection.named) throw new ForbiddenError(`profile ${name} is not on this webhook's profile allowlist`, { profile: name });
      if (!roleGrants(actor.role, 'dags:run')) throw new ForbiddenError('Permission denied to run DAGs', { profile: name });
      if (record?.protected === true && actor.role !== 'admin') {
        if (selection.named) throw protectedOnly(name, 'use');
        throw new ForbiddenError(`only admins may use protected profiles: ${name} is the default profile of runs that name none`, { profile: name });
      }
    }
    if (record === undefined) throw notFound(name);
    if (record.status !== 'active') throw disabled(name);
    return record;
  }

  /**
   * The effective entries of a run: Global defaults, then the workspace's defaults (when the
   * DAG names one), then the selected profile, which must exist and be active; secrets opened.
   * The values exist only in the answer: callers keep them in memory and record only keys,
   * kinds and layers (`describe`). `asOf` is the profile counter as a statement just sent saw
   * it (an admission's): given, entries kept at that value answer without a statement.
   */
  async resolve(input: ResolveInput, q: Queryable = this.db, asOf?: number): Promise<ResolvedProfile> {
    const { entries, sealed } = await this.effective(input, q, asOf);
    const resolved = entries.map((entry): ResolvedEntry => {
      const secret = entry.secretId !== null ? sealed.get(entry.secretId) : undefined;
      return { key: entry.key, kind: entry.kind, layer: entry.layer, value: secret !== undefined ? this.keyring.open(secret, secret.id) : (entry.value ?? '') };
    });
    return { ...(input.profileName !== undefined ? { profileName: input.profileName } : {}), entries: resolved };
  }

  /** What `resolve` would answer without opening a secret: keys, kinds and layers (what a run records). */
  async describe(input: ResolveInput, q: Queryable = this.db, asOf?: number): Promise<ProfileEntryMeta[]> {
    return (await this.effective(input, q, asOf)).entries.map((e) => ({ key: e.key, kind: e.kind, layer: e.layer }));
  }

  /**
   * The entries that win per key and their sealed values, from memory while the profile counter
   * has not moved. Reads made inside a caller's transaction are not kept: they may hold its
   * uncommitted writes. Nor is a read that found an entry's secret gone (a delete landed between
   * its statements): the next read, at the moved counter, sees both sides of it.
   */
  private async effective(input: ResolveInput, q: Queryable, asOf?: number): Promise<EffectiveEntries> {
    if (q !== this.db) return this.readEffective(input, q);
    const version = asOf ?? (await profilesVersion(q));
    const key = pairKey(input.workspaceName, input.profileName);
    const kept = this.effectiveEntries.get(version, key);
    if (kept !== undefined) return kept;
    const read = await this.readEffective(input, q);
    if (read.entries.every((e) => e.secretId === null || read.sealed.has(e.secretId))) this.effectiveEntries.set(version, key, read);
    return read;
  }

  /** The entries that win per key and the sealed values they point at, as the database has them. */
  private async readEffective(input: ResolveInput, q: Queryable): Promise<EffectiveEntries> {
    const entries = await this.readEntries(input, q);
    const sealed = new Map((await getSealedSecrets(q, entries.flatMap((e) => (e.secretId !== null ? [e.secretId] : [])))).map((s) => [s.id, s]));
    return { entries, sealed };
  }

  /** The entry records that win per key, later layers first, sorted by key. */
  private async readEntries(input: ResolveInput, q: Queryable): Promise<EffectiveEntry[]> {
    const layers: Array<{ layer: ResolvedEntry['layer']; record: ProfileRecord | undefined }> = [{ layer: 'global', record: await getLayer(q, { scope: 'global' }) }];
    if (input.workspaceName !== undefined) {
      const workspace = await getWorkspaceByName(q, input.workspaceName);
      if (workspace !== undefined) layers.push({ layer: 'workspace', record: await getLayer(q, { scope: 'workspace', workspaceId: workspace.id }) });
    }
    if (input.profileName !== undefined) {
      const record = await getLayer(q, { scope: 'profile', name: input.profileName });
      if (record === undefined) throw notFound(input.profileName);
      if (record.status !== 'active') throw disabled(input.profileName);
      layers.push({ layer: 'profile', record });
    }
    const present = layers.filter((l): l is { layer: ResolvedEntry['layer']; record: ProfileRecord } => l.record !== undefined);
    const entries = await listEntries(q, present.map((l) => l.record.id));
    const effective = new Map<string, EffectiveEntry>();
    for (const { layer, record } of present) {
      for (const entry of entries.filter((e) => e.profileId === record.id)) effective.set(entry.key, { ...entry, layer });
    }
    return [...effective.values()].sort((a, b) => a.key.localeCompare(b.key));
  }

  /**
   * Re-seals every value sealed under a key this coordinator holds with its current key, a batch
   * at a time, each row compare-and-swapped so a value set meanwhile is left as it is. Runs keep
   * reading throughout: every coordinator holds the old key until the operator removes it.
   */
  async rotateKey(actor: Principal): Promise<RotationResult> {
    const current = this.keyring.requireCurrentKeyId();
    const older = this.keyring.keyIds.filter((id) => id !== current);
    let reencrypted = 0;
    for (let batch = await secretsSealedWith(this.db, older, ROTATION_BATCH); batch.length > 0; batch = await secretsSealedWith(this.db, older, ROTATION_BATCH)) {
      for (const secret of batch) {
        const resealed = this.keyring.seal(this.keyring.open(secret, secret.id), secret.id);
        if (await resealSecret(this.db, secret.id, { keyId: secret.keyId, nonce: secret.nonce }, resealed)) reencrypted += 1;
      }
    }
    // The sealed inputs of runs that carry secrets (sub-runs handed a parent's), kept for retries.
    for (let batch = await secretParamsSealedWith(this.db, older, ROTATION_BATCH); batch.length > 0; batch = await secretParamsSealedWith(this.db, older, ROTATION_BATCH)) {
      for (const { runId, sealed } of batch) {
        const aad = runInputsAad(runId);
        await resealSecretParams(this.db, runId, { keyId: sealed.keyId, nonce: sealed.nonce }, this.keyring.seal(this.keyring.open(sealed, aad), aad));
      }
    }
    reencrypted += await this.resealSyncToken(older);
    const counts = await secretCountsByKey(this.db);
    for (const [keyId, count] of Object.entries(await secretParamsCountsByKey(this.db))) counts[keyId] = (counts[keyId] ?? 0) + count;
    const token = (await getSyncConfig(this.db))?.token;
    if (token !== undefined) counts[token.keyId] = (counts[token.keyId] ?? 0) + 1;
    const remaining = Object.fromEntries(Object.entries(counts).filter(([id]) => id !== current));
    await recordAudit(this.db, actor, { type: 'secrets.key_rotated', message: `re-encrypted ${reencrypted} secrets under key ${current}`, data: { keyId: current, reencrypted, remaining } });
    return { keyId: current, reencrypted, remaining };
  }

  /** The repository sync token is a secret of the store too: sealed under an older key, it is re-sealed. */
  private async resealSyncToken(older: string[]): Promise<number> {
    const token = (await getSyncConfig(this.db))?.token;
    if (token === undefined || !older.includes(token.keyId)) return 0;
    const resealed = this.keyring.seal(this.keyring.open(token, SYNC_TOKEN_SECRET_ID), SYNC_TOKEN_SECRET_ID);
    return (await resealSyncToken(this.db, token, resealed)) ? 1 : 0;
  }

  private async find(address: LayerAddress): Promise<ProfileRecord | undefined> {
    return getLayer(this.db, await this.ref(address));
  }

  private async ref(address: LayerAddress): Promise<LayerRef> {
    if (address.scope !== 'workspace') return address;
    const workspace = await getWorkspaceByName(this.db, address.workspaceName);
    if (workspace === undefined) throw new NotFoundError('Workspace not found', { workspace: address.workspaceName });
    return { scope: 'workspace', workspaceId: workspace.id };
  }

  /** The layer to change, created for defaults layers; refused for a protected profile unless admin. */
  private async writable(actor: Principal, address: LayerAddress, action: string): Promise<ProfileRecord> {
    const ref = await this.ref(address);
    if (ref.scope !== 'profile') return ensureDefaultsLayer(this.db, ref, randomUUID(), actor.id);
    const record = await getLayer(this.db, ref);
    if (record === undefined) throw notFound(ref.name);
    guardProtected(actor, record, action);
    return record;
  }

  private audit(actor: Principal, type: string, name: string, data: Record<string, unknown>): Promise<void> {
    return recordAudit(this.db, actor, { type, message: `${type.replace('profile.', '').replace('_', ' ')} ${name}`, data: { profile: name, ...data } });
  }
}

function notFound(name: string): NotFoundError {
  return new NotFoundError(`Profile ${name} not found`, { profile: name });
}

function disabled(name: string): BadRequestError {
  return new BadRequestError(`profile ${name} is disabled: disabled profiles cannot be used for new runs`, { profile: name });
}

function protectedOnly(name: string, action: string): ForbiddenError {
  return new ForbiddenError(`only admins may ${action} protected profiles`, { profile: name });
}

function guardProtected(actor: Principal, record: ProfileRecord, action: string): void {
  if (record.protected && actor.role !== 'admin') throw protectedOnly(record.name ?? '', action);
}

function entryView(entry: ProfileEntryRecord): ProfileEntryView {
  return {
    key: entry.key,
    kind: entry.kind,
    ...(entry.kind === 'variable' && entry.value !== null ? { value: entry.value } : {}),
    ...(entry.secretId !== null ? { secretId: entry.secretId } : {}),
    updatedAt: entry.updatedAt.toISOString(),
  };
}

function view(record: ProfileRecord, address: LayerAddress, entries: ProfileEntryRecord[]): ProfileView {
  return {
    name: layerName(address),
    scope: record.scope,
    ...(address.scope === 'workspace' ? { workspace: address.workspaceName } : {}),
    description: record.description,
    status: record.status,
    protected: record.protected,
    entries: entries.map(entryView),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

function emptyLayer(address: LayerAddress): ProfileView {
  return { name: layerName(address), scope: address.scope, ...(address.scope === 'workspace' ? { workspace: address.workspaceName } : {}), description: '', status: 'active', protected: false, entries: [] };
}
