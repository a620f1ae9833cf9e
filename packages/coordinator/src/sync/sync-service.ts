import {
  BadRequestError, ForbiddenError, NotFoundError, ServiceUnavailableError, SyncConflictError, toError,
} from '@trellis/core';
import {
  contentHash, deleteSyncItem, getSyncConfig, listSyncItems, putSyncConfig, putSyncItem, recordSyncedCommit, recordSyncedSpec, withSyncLock,
  type Db, type Queryable, type SyncConfigRecord, type SyncItemRecord,
} from '@trellis/store';
import type { SecretKeyring } from '../profiles/secret-keyring.js';
import { SYNC_TOKEN_SECRET_ID } from './sync-token-id.js';
import type { StoredKindCache } from '../stored-files/stored-kind-cache.js';
import type { Actor } from '../auth/principal.js';
import { recordAudit } from '../auth/audit.js';
import type { Logger } from '../logging/logger.js';
import { GitRemote, RemoteError, type FileChanges, type RemoteAccess } from './git-remote.js';
import { DEFAULT_SYNC_SETTINGS, syncSettingsSchema, type SyncSettings } from './sync-settings.js';
import { itemIdOf, itemOfFile, parseItemId, relativeFileOf, statusOf, SYNC_STATUSES, type ItemRef, type SyncKind, type SyncStatus } from './sync-items.js';


/** Who writes what a pull brings: recorded as the stored files' `updatedBy`. */
const SYNC_WRITER = 'git-sync';

/** The settings as `GET /sync/config` shows them: whether a token is stored, never the token. */
export type SyncConfigView = SyncSettings & { auth: { type: 'none' | 'token' } };

export interface SyncConfigInput extends Partial<Omit<SyncSettings, 'autoSync' | 'commit'>> {
  autoSync?: Partial<SyncSettings['autoSync']>;
  commit?: Partial<SyncSettings['commit']>;
  auth?: { type: 'none' | 'token'; token?: string | undefined };
}

export interface SyncItemView {
  itemId: string;
  filePath: string;
  displayName: string;
  kind: SyncKind;
  status: SyncStatus;
}

/** The answer of pull and the publish endpoints. */
export interface SyncOutcome {
  success: boolean;
  message: string;
  synced: string[];
  modified: string[];
  conflicts: string[];
  errors: string[];
  timestamp: string;
}

interface Item extends ItemRef {
  itemId: string;
  local: string | undefined;
  row: SyncItemRecord | undefined;
}

export interface SyncServiceDeps {
  db: Db;
  keyring: SecretKeyring;
  dags: StoredKindCache;
  docs: StoredKindCache;
  /** The bare clone (a cache) under the data directory. */
  gitdir: string;
  logger: Logger;
  /** The server's `writeDags` setting (the contract's `write_dags` permission). */
  writeDags: boolean;
}

/** The local files, the repository's and the state of one sync step, read before anything is written. */
interface Snapshot {
  settings: SyncSettings;
  access: RemoteAccess;
  head: string;
  remote: Map<string, string>;
}

/** A pull's decision for one item: the file to write (null: delete), the state to record, how it is reported. */
interface PullPlan {
  verdict?: 'synced' | 'modified' | 'conflicts';
  write?: string | null;
  /** `agree`: both sides now hold the repository's text; `drop`: the entry goes; a row: recorded as is. */
  state?: 'agree' | 'drop' | Pick<SyncItemRecord, 'syncedHash' | 'remoteHash' | 'syncedCommit'>;
}

const keyOf = (ref: ItemRef): string => `${ref.kind}:${ref.name}`;
const hashOf = (content: string | undefined): string | undefined => (content !== undefined ? contentHash(content) : undefined);

/**
 * Repository sync of DAGs and documents (the contract's Repository sync section). The state
 * (settings, sealed token, per item the hash last agreed on and the repository's hash at the
 * last fetch) is in the database; the clone is a cache. A step that talks to the repository
 * runs under the sync lock (one coordinator at a time), fetches first and reads everything it
 * needs before it writes, so a repository that goes away mid-step leaves nothing half-written.
 * What a pull brings is written to the stored files, whose change feed reaches every coordinator.
 */
export class SyncService {
  private readonly remote: GitRemote;
  /** In-process turn-taking: PGlite's lock excludes nothing, and two requests here should not interleave either. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SyncServiceDeps) {
    this.remote = new GitRemote(deps.gitdir);
  }

  async settings(): Promise<SyncSettings> {
    return this.settingsOf(await getSyncConfig(this.deps.db));
  }

  private settingsOf(record: SyncConfigRecord | undefined): SyncSettings {
    if (record === undefined) return DEFAULT_SYNC_SETTINGS;
    const parsed = syncSettingsSchema.safeParse(record.settings);
    return parsed.success ? parsed.data : DEFAULT_SYNC_SETTINGS;
  }

  /** Read-only mode: sync on with pushing off, so the repository alone decides what DAGs and documents hold. */
  async readOnly(): Promise<boolean> {
    const settings = await this.settings();
    return settings.enabled && !settings.pushEnabled;
  }

  /** The contract's server-level `write_dags` permission, needed by every sync action that changes something. */
  private requireWriteDags(): void {
    if (!this.deps.writeDags) throw new ForbiddenError('writing DAGs and documents is turned off on this server (writeDags: false, SVC_WRITE_DAGS)');
  }

  /** The gate of API writes to DAGs and documents: refused (403) with writeDags off or in read-only mode. */
  async requireWritable(): Promise<void> {
    this.requireWriteDags();
    if (await this.readOnly()) throw new ForbiddenError('repository sync is in read-only mode (pushEnabled: false): change DAGs and documents in the repository and pull them');
  }

  async config(): Promise<SyncConfigView> {
    const record = await getSyncConfig(this.deps.db);
    return { ...this.settingsOf(record), auth: { type: record?.token !== undefined ? 'token' : 'none' } };
  }

  /** Stores new settings over the current ones; a token given is sealed, `auth.type: none` drops it. */
  async updateConfig(actor: Actor, input: SyncConfigInput): Promise<SyncConfigView> {
    const current = await this.settings();
    const parsed = syncSettingsSchema.safeParse({ ...current, ...input, autoSync: { ...current.autoSync, ...input.autoSync }, commit: { ...current.commit, ...input.commit } });
    if (!parsed.success) throw new BadRequestError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const settings = parsed.data;
    if (settings.enabled && settings.repository === '') throw new BadRequestError('repository is required when sync is enabled');
    const record = await getSyncConfig(this.deps.db);
    const token = input.auth?.type === 'none' ? null : input.auth?.token !== undefined && input.auth.token !== '' ? this.deps.keyring.seal(input.auth.token, SYNC_TOKEN_SECRET_ID) : undefined;
    if (input.auth?.type === 'token' && token === undefined && record?.token === undefined) throw new BadRequestError('auth.token is required with auth.type token');
    await putSyncConfig(this.deps.db, settings, token);
    await recordAudit(this.deps.db, actor, { type: 'sync.config.updated', message: 'updated the repository sync settings', data: { repository: settings.repository, branch: settings.branch, enabled: settings.enabled, pushEnabled: settings.pushEnabled, tokenChanged: token !== undefined } });
    return this.config();
  }

  private access(settings: SyncSettings, record: SyncConfigRecord | undefined): RemoteAccess {
    const token = record?.token !== undefined ? this.deps.keyring.open(record.token, SYNC_TOKEN_SECRET_ID) : undefined;
    return { url: settings.repository, branch: settings.branch, token };
  }

  async testConnection(): Promise<{ success: boolean; message: string }> {
    const record = await getSyncConfig(this.deps.db);
    const settings = this.settingsOf(record);
    if (settings.repository === '') return { success: false, message: 'no repository is configured' };
    try {
      await this.remote.probe(this.access(settings, record));
      return { success: true, message: `connected to ${settings.repository} (branch ${settings.branch})` };
    } catch (error) {
      return { success: false, message: toError(error).message };
    }
  }

  async status(): Promise<Record<string, unknown>> {
    const record = await getSyncConfig(this.deps.db);
    const settings = this.settingsOf(record);
    const items = settings.enabled ? await this.items() : [];
    const counts = Object.fromEntries(SYNC_STATUSES.map((s) => [s, 0])) as Record<SyncStatus, number>;
    const views = items.flatMap((item) => {
      const view = this.view(settings, item);
      if (view !== undefined) counts[view.status] += 1;
      return view !== undefined ? [view] : [];
    });
    const dirty = counts.modified + counts.untracked + counts.conflict + counts.missing;
    return {
      enabled: settings.enabled,
      repository: settings.repository,
      branch: settings.branch,
      summary: !settings.enabled ? 'sync is disabled' : dirty === 0 ? 'everything is in sync' : `${dirty} item(s) differ from the repository`,
      lastSyncAt: record?.lastSyncAt?.toISOString() ?? '',
      lastSyncCommit: record?.lastSyncCommit ?? '',
      items: views,
      counts,
    };
  }

  private view(settings: SyncSettings, item: Item): SyncItemView | undefined {
    const status = statusOf({ local: hashOf(item.local), synced: item.row?.syncedHash, remote: item.row?.remoteHash });
    if (status === undefined) return undefined;
    return { itemId: item.itemId, filePath: this.filePath(settings, item), displayName: item.name, kind: item.kind, status };
  }

  private filePath(settings: SyncSettings, ref: ItemRef): string {
    return settings.path === '' ? relativeFileOf(ref) : `${settings.path}/${relativeFileOf(ref)}`;
  }

  private cache(kind: SyncKind): StoredKindCache {
    return kind === 'dag' ? this.deps.dags : this.deps.docs;
  }

  /** Every item this side has or the state knows, with its local content (exact: the caches are brought up to date first). */
  private async items(): Promise<Item[]> {
    await Promise.all([this.deps.dags.current(), this.deps.docs.current()]);
    const byKey = new Map<string, Item>();
    const add = (ref: ItemRef): Item => {
      const key = keyOf(ref);
      let item = byKey.get(key);
      if (item === undefined) {
        item = { ...ref, itemId: itemIdOf(ref), local: this.cache(ref.kind).get(ref.name)?.content ?? undefined, row: undefined };
        byKey.set(key, item);
      }
      return item;
    };
    for (const kind of ['dag', 'doc'] as const) for (const file of this.cache(kind).all()) if (file.content !== null && parseItemId(itemIdOf({ kind, name: file.name })) !== undefined) add({ kind, name: file.name });
    for (const row of await listSyncItems(this.deps.db)) add(row).row = row;
    return [...byKey.values()].sort((a, b) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0));
  }

  /** One step at a time here, and under the database's sync lock across coordinators. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.turn.catch(() => undefined).then(() => withSyncLock(this.deps.db, fn));
    this.turn = next;
    return next;
  }

  /** Fetches and reads the repository's files under the sync path: everything a step needs from the network. */
  private async snapshot(requirePush: boolean): Promise<Snapshot> {
    const record = await getSyncConfig(this.deps.db);
    const settings = this.settingsOf(record);
    if (!settings.enabled || settings.repository === '') throw new BadRequestError('repository sync is not enabled: configure it with PUT /sync/config');
    if (requirePush && !settings.pushEnabled) throw new BadRequestError('repository sync is in read-only mode (pushEnabled: false): nothing is pushed to the repository');
    const access = this.access(settings, record);
    const head = await this.remote.fetch(access);
    const remote = new Map<string, string>();
    for (const [relative, content] of await this.remote.files(head, settings.path)) {
      const ref = itemOfFile(relative);
      if (ref !== undefined) remote.set(keyOf(ref), content);
    }
    return { settings, access, head, remote };
  }

  private async write(ref: ItemRef, content: string | undefined): Promise<void> {
    if (content === undefined) await this.cache(ref.kind).delete(ref.name, SYNC_WRITER);
    else await this.cache(ref.kind).put(ref.name, content, SYNC_WRITER);
  }

  private outcome(message: string, parts: Partial<SyncOutcome> = {}): SyncOutcome {
    const errors = parts.errors ?? [];
    return { success: errors.length === 0, message, synced: [], modified: [], conflicts: [], ...parts, errors, timestamp: new Date().toISOString() };
  }

  /** A repository failure as a step's answer: the pull-shaped endpoints report it, they do not throw. */
  private failed(error: unknown): SyncOutcome {
    if (!(error instanceof RemoteError)) throw error;
    return this.outcome(error.message, { errors: [error.message] });
  }

  /**
   * Brings the repository's changes in: new and changed items whose local copy was not changed
   * are written, items deleted there and unchanged here are deleted; both changed is a conflict
   * (left alone). Everything is read before the first write.
   */
  async pull(actor: Actor | undefined): Promise<SyncOutcome> {
    // Auto-sync (no actor) is how a server with API writes turned off takes its DAGs in.
    if (actor !== undefined) this.requireWriteDags();
    return this.exclusive(async () => {
      let snap: Snapshot;
      try {
        snap = await this.snapshot(false);
      } catch (error) {
        return this.failed(error);
      }
      const items = await this.items();
      const known = new Set(items.map(keyOf));
      for (const key of snap.remote.keys()) {
        if (known.has(key)) continue;
        const [kind, ...rest] = key.split(':');
        const ref = { kind: kind as SyncKind, name: rest.join(':') };
        items.push({ ...ref, itemId: itemIdOf(ref), local: undefined, row: undefined });
      }
      const result = { synced: [] as string[], modified: [] as string[], conflicts: [] as string[] };
      const plans = items.map((item) => ({ item, plan: this.planPull(snap, item) }));
      for (const { item, plan } of plans) if (plan.verdict !== undefined) result[plan.verdict].push(item.itemId);
      await this.applyPull(snap, plans);
      await recordSyncedCommit(this.deps.db, snap.head);
      if (actor !== undefined) await recordAudit(this.deps.db, actor, { type: 'sync.pulled', message: `pulled ${snap.settings.branch} at ${snap.head.slice(0, 12)}`, data: { commit: snap.head, ...result } });
      return this.outcome(`pulled ${snap.head.slice(0, 12)}: ${result.synced.length} synced, ${result.modified.length} modified here, ${result.conflicts.length} in conflict`, result);
    });
  }

  /** What a pull does with one item, decided from the three versions before anything is written. */
  private planPull(snap: Snapshot, item: Item): PullPlan {
    const remote = snap.remote.get(keyOf(item));
    const remoteHash = hashOf(remote) ?? null;
    const localHash = hashOf(item.local);
    const row = item.row;
    // Both sides hold the repository's text: the state says so (unless it already does).
    const agree = (write?: string | null): PullPlan => ({
      verdict: 'synced',
      ...(write !== undefined ? { write } : {}),
      ...(remote === undefined ? { state: 'drop' } : row?.syncedHash !== remoteHash || row?.remoteHash !== remoteHash ? { state: 'agree' } : {}),
    });
    if (row === undefined) {
      if (remote === undefined) return {};
      if (item.local === undefined) return agree(remote);
      if (localHash === remoteHash) return agree();
      return { verdict: 'conflicts', state: { syncedHash: null, remoteHash, syncedCommit: snap.head } };
    }
    if (localHash === remoteHash) return remote === undefined ? { state: 'drop' } : agree();
    if (localHash === row.syncedHash) return agree(remote ?? null);
    const state = { ...row, remoteHash };
    if (item.local === undefined) return { state };
    return { verdict: remoteHash === row.syncedHash ? 'modified' : 'conflicts', state };
  }

  /**
   * Writes what the plans decided: the files of each kind in one transaction (one change for
   * every coordinator to catch up on), then the state in one transaction.
   */
  private async applyPull(snap: Snapshot, plans: Array<{ item: Item; plan: PullPlan }>): Promise<void> {
    for (const kind of ['dag', 'doc'] as const) {
      const ofKind = plans.filter(({ item, plan }) => item.kind === kind && plan.write !== undefined);
      const puts = ofKind.flatMap(({ item, plan }) => (typeof plan.write === 'string' ? [{ name: item.name, content: plan.write }] : []));
      await this.cache(kind).putMany(puts, SYNC_WRITER);
      for (const { item, plan } of ofKind) if (plan.write === null) await this.cache(kind).delete(item.name, SYNC_WRITER);
    }
    await this.deps.db.transaction(async (tx) => {
      for (const { item, plan } of plans) {
        const content = snap.remote.get(keyOf(item));
        if (plan.state === 'drop') await deleteSyncItem(tx, item.kind, item.name);
        else if (plan.state === 'agree' && content !== undefined) await this.agreed(item, content, snap.head, tx);
        else if (typeof plan.state === 'object') await putSyncItem(tx, { kind: item.kind, name: item.name, syncedHash: plan.state.syncedHash, remoteHash: plan.state.remoteHash, syncedCommit: plan.state.syncedCommit });
      }
    });
  }

  /** The item an id names, as this side and the state have it; 400 for an id that names nothing valid, 404 for one unknown here. */
  private async item(itemId: string): Promise<{ settings: SyncSettings; item: Item; status: SyncStatus }> {
    const ref = parseItemId(itemId);
    if (ref === undefined) throw new BadRequestError('itemId must be a DAG file name or docs/ and a document id', { itemId });
    const settings = await this.settings();
    if (!settings.enabled) throw new BadRequestError('repository sync is not enabled: configure it with PUT /sync/config');
    const item = (await this.items()).find((i) => i.kind === ref.kind && i.name === ref.name);
    const view = item !== undefined ? this.view(settings, item) : undefined;
    if (item === undefined || view === undefined) throw new NotFoundError('sync item not found', { itemId });
    return { settings, item, status: view.status };
  }

  async diff(itemId: string): Promise<{ itemId: string; filePath: string; status: SyncStatus; localContent: string; remoteContent: string }> {
    const { settings, item, status } = await this.item(itemId);
    let remoteContent = '';
    if (item.row !== undefined) {
      const snap = await this.exclusive(() => this.snapshot(false)).catch((error: unknown) => {
        throw error instanceof RemoteError ? new ServiceUnavailableError(error.message) : error;
      });
      remoteContent = snap.remote.get(keyOf(item)) ?? '';
    }
    return { itemId, filePath: this.filePath(settings, item), status, localContent: item.local ?? '', remoteContent };
  }

  /** A 409 unless forced when the repository's copy is no longer the one this side last agreed with. */
  private async checkConflict(snap: Snapshot, item: Item, force: boolean): Promise<void> {
    if (force) return;
    const remoteHash = hashOf(snap.remote.get(keyOf(item)));
    const base = item.row === undefined ? undefined : item.row.syncedHash ?? 'never-agreed';
    if (remoteHash === base || remoteHash === hashOf(item.local)) return;
    const change = await this.remote.lastChange(snap.head, this.filePath(snap.settings, item));
    throw new SyncConflictError(`${item.itemId} was changed in the repository since it was last synced (${change.oid.slice(0, 12)} by ${change.author}): pull, or publish with force`, {
      itemId: item.itemId, remoteCommit: change.oid, remoteAuthor: change.author, remoteMessage: change.message,
    });
  }

  /** Commits the changes (paths relative to the sync path) and records what both sides now agree on. */
  private async commit(snap: Snapshot, changes: Array<{ ref: ItemRef; content: string | null }>, message: string): Promise<string> {
    const files: FileChanges = new Map(changes.map(({ ref, content }) => [this.filePath(snap.settings, ref), content]));
    const author = { name: snap.settings.commit.authorName, email: snap.settings.commit.authorEmail };
    const oid = await this.remote.commitAndPush(snap.access, snap.head, files, message, author);
    for (const { ref, content } of changes) {
      if (content === null) await deleteSyncItem(this.deps.db, ref.kind, ref.name);
      else await this.agreed(ref, content, oid);
    }
    await recordSyncedCommit(this.deps.db, oid);
    return oid;
  }

  /**
   * Both sides hold `content` as of `commit`. For a DAG the commit is also noted against the
   * text's hash, so a run of this exact definition names the commit it came from.
   */
  private async agreed(ref: ItemRef, content: string, commit: string, q: Queryable = this.deps.db): Promise<void> {
    const hash = contentHash(content);
    await putSyncItem(q, { kind: ref.kind, name: ref.name, syncedHash: hash, remoteHash: hash, syncedCommit: commit });
    if (ref.kind === 'dag') await recordSyncedSpec(q, hash, commit);
  }

  private remoteFailure(error: unknown): never {
    throw error instanceof RemoteError ? new ServiceUnavailableError(error.message) : error;
  }

  /**
   * A publish's frame: the repository as it is now, then the step. Sync turned off or read-only
   * is the caller's 400; a repository that cannot be reached is the step's answer, not an error.
   */
  private async pushSnapshot(step: (snap: Snapshot) => Promise<SyncOutcome>): Promise<SyncOutcome> {
    let snap: Snapshot;
    try {
      snap = await this.snapshot(true);
    } catch (error) {
      return this.failed(error);
    }
    return step(snap);
  }

  async publishItem(actor: Actor, itemId: string, message: string | undefined, force: boolean): Promise<SyncOutcome> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const { item, status } = await this.item(itemId);
      if (status === 'missing') throw new BadRequestError(`${itemId} is missing here: delete it (POST /sync/items/{itemId}/delete) or discard to restore it`, { itemId });
      return this.pushSnapshot(async (snap) => {
        await this.checkConflict(snap, item, force);
        if (status === 'synced' && hashOf(snap.remote.get(keyOf(item))) === hashOf(item.local)) return this.outcome(`${itemId} is already in sync`, { synced: [itemId] });
        try {
          const oid = await this.commit(snap, [{ ref: item, content: item.local ?? null }], message ?? `Update ${itemId}`);
          await recordAudit(this.deps.db, actor, { type: 'sync.published', message: `published ${itemId} as ${oid.slice(0, 12)}`, data: { itemIds: [itemId], commit: oid, force } });
          return this.outcome(`published ${itemId} as ${oid.slice(0, 12)}`, { synced: [itemId] });
        } catch (error) {
          return this.failed(error);
        }
      });
    });
  }

  /** Publishes the named items, or every modified and untracked one, in one commit; items in conflict are listed, not published. */
  async publishAll(actor: Actor, message: string | undefined, itemIds: string[] | undefined): Promise<SyncOutcome> {
    this.requireWriteDags();
    return this.exclusive(() => this.pushSnapshot(async (snap) => {
      const items = (await this.items()).flatMap((item) => {
        const view = this.view(snap.settings, item);
        return view !== undefined ? [{ item, status: view.status }] : [];
      });
      const wanted = itemIds !== undefined ? new Set(itemIds) : undefined;
      const unknown = itemIds?.filter((id) => !items.some(({ item }) => item.itemId === id)) ?? [];
      const chosen = items.filter(({ item, status }) => (wanted !== undefined ? wanted.has(item.itemId) : status === 'modified' || status === 'untracked'));
      const conflicts: string[] = [];
      const changes: Array<{ ref: ItemRef; content: string | null }> = [];
      for (const { item, status } of chosen) {
        if (status === 'missing' || status === 'synced') continue;
        const conflicted = await this.checkConflict(snap, item, false).then(() => false, (error: unknown) => {
          if (error instanceof SyncConflictError) return true;
          throw error;
        });
        if (conflicted) conflicts.push(item.itemId);
        else changes.push({ ref: item, content: item.local ?? null });
      }
      const errors = unknown.map((id) => `${id}: sync item not found`);
      if (changes.length === 0) return this.outcome('nothing to publish', { conflicts, errors });
      try {
        const oid = await this.commit(snap, changes, message ?? `Update ${changes.length} item(s)`);
        const published = changes.map((c) => itemIdOf(c.ref));
        await recordAudit(this.deps.db, actor, { type: 'sync.published', message: `published ${published.length} item(s) as ${oid.slice(0, 12)}`, data: { itemIds: published, commit: oid } });
        return this.outcome(`published ${published.length} item(s) as ${oid.slice(0, 12)}`, { synced: published, conflicts, errors });
      } catch (error) {
        return this.failed(error);
      }
    }));
  }

  /** Back to the repository's version: this side's change is dropped (a missing item comes back). */
  async discard(actor: Actor, itemId: string): Promise<{ message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const { item, status } = await this.item(itemId);
      if (status === 'untracked') throw new BadRequestError(`${itemId} is untracked: the repository has no version of it to go back to`, { itemId });
      const snap = await this.snapshot(false).catch((error: unknown) => this.remoteFailure(error));
      const remote = snap.remote.get(keyOf(item));
      await this.write(item, remote);
      if (remote === undefined) await deleteSyncItem(this.deps.db, item.kind, item.name);
      else await this.agreed(item, remote, snap.head);
      await recordAudit(this.deps.db, actor, { type: 'sync.discarded', message: `discarded the local changes of ${itemId}`, data: { itemId, commit: snap.head } });
      return { message: `${itemId} is back to the repository's version at ${snap.head.slice(0, 12)}` };
    });
  }

  /** Drops the state entry of a missing, untracked or conflicting item; synced and modified ones are refused. */
  async forget(actor: Actor, itemId: string): Promise<{ message: string }> {
    this.requireWriteDags();
    const { item, status } = await this.item(itemId);
    if (status === 'synced' || status === 'modified') throw new BadRequestError(`${itemId} is ${status}: only missing, untracked or conflicting items can be forgotten`, { itemId, status });
    await deleteSyncItem(this.deps.db, item.kind, item.name);
    await recordAudit(this.deps.db, actor, { type: 'sync.forgotten', message: `forgot the sync state of ${itemId}`, data: { itemId } });
    return { message: `${itemId} forgotten` };
  }

  /** Removes the item from the repository (one commit), from this side and from the state. */
  async delete(actor: Actor, itemId: string, message: string | undefined, force: boolean): Promise<{ message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const { item, status, settings } = await this.item(itemId);
      if (!settings.pushEnabled) throw new BadRequestError('repository sync is in read-only mode (pushEnabled: false): nothing is deleted from the repository', { itemId });
      if (status === 'untracked') throw new BadRequestError(`${itemId} is untracked: it is not in the repository`, { itemId });
      if (status === 'modified' && !force) throw new BadRequestError(`${itemId} has local changes: delete with force to drop them`, { itemId });
      const snap = await this.snapshot(true).catch((error: unknown) => this.remoteFailure(error));
      if (snap.remote.has(keyOf(item))) await this.commit(snap, [{ ref: item, content: null }], message ?? `Delete ${itemId}`).catch((error: unknown) => this.remoteFailure(error));
      else await deleteSyncItem(this.deps.db, item.kind, item.name);
      if (item.local !== undefined) await this.write(item, undefined);
      await recordAudit(this.deps.db, actor, { type: 'sync.deleted', message: `deleted ${itemId} from the repository`, data: { itemId } });
      return { message: `${itemId} deleted from the repository and here` };
    });
  }

  /** Deletes from the repository every item that is missing here (one commit), and their state. */
  async deleteMissing(actor: Actor, message: string | undefined): Promise<{ deleted: string[]; message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const snap = await this.snapshot(true).catch((error: unknown) => this.remoteFailure(error));
      const missing = (await this.items()).filter((item) => this.view(snap.settings, item)?.status === 'missing');
      const inRepository = missing.filter((item) => snap.remote.has(keyOf(item)));
      if (inRepository.length > 0) await this.commit(snap, inRepository.map((ref) => ({ ref, content: null })), message ?? `Delete ${inRepository.length} item(s)`).catch((error: unknown) => this.remoteFailure(error));
      for (const item of missing) await deleteSyncItem(this.deps.db, item.kind, item.name);
      const deleted = missing.map((item) => item.itemId);
      if (deleted.length > 0) await recordAudit(this.deps.db, actor, { type: 'sync.deleted', message: `deleted ${deleted.length} missing item(s) from the repository`, data: { itemIds: deleted } });
      return { deleted, message: deleted.length === 0 ? 'no missing items' : `deleted ${deleted.length} missing item(s)` };
    });
  }

  /** Renames an item here and in the repository (one commit); a DAG stays a DAG and a document a document. */
  async move(actor: Actor, itemId: string, newItemId: string, message: string | undefined, force: boolean): Promise<{ message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const target = parseItemId(newItemId);
      if (target === undefined) throw new BadRequestError('newItemId must be a DAG file name or docs/ and a document id', { newItemId });
      const { item, settings } = await this.item(itemId);
      if (target.kind !== item.kind) throw new BadRequestError('an item cannot move between DAGs and documents', { itemId, newItemId });
      if (!settings.pushEnabled) throw new BadRequestError('repository sync is in read-only mode (pushEnabled: false): nothing is moved in the repository', { itemId });
      if (item.local === undefined) throw new BadRequestError(`${itemId} is missing here: nothing to move`, { itemId });
      const snap = await this.snapshot(true).catch((error: unknown) => this.remoteFailure(error));
      await this.checkConflict(snap, item, force);
      if (this.cache(target.kind).get(target.name)?.content != null || snap.remote.has(keyOf(target))) throw new SyncConflictError(`${newItemId} exists already`, { itemId, remoteCommit: snap.head, remoteAuthor: '', remoteMessage: '' });
      const changes = [{ ref: item as ItemRef, content: null }, { ref: target, content: item.local }];
      await this.commit(snap, changes, message ?? `Move ${itemId} to ${newItemId}`).catch((error: unknown) => this.remoteFailure(error));
      const renamed = await this.cache(item.kind).rename(item.name, target.name, SYNC_WRITER);
      if (!renamed.renamed) await this.write(target, item.local);
      await recordAudit(this.deps.db, actor, { type: 'sync.moved', message: `moved ${itemId} to ${newItemId}`, data: { itemId, newItemId } });
      return { message: `${itemId} moved to ${newItemId}` };
    });
  }

  /** Drops the state entries of missing items; the repository is not touched. */
  async cleanup(actor: Actor): Promise<{ forgotten: string[]; message: string }> {
    this.requireWriteDags();
    const missing = (await this.items()).filter((item) => item.row !== undefined && item.local === undefined);
    for (const item of missing) await deleteSyncItem(this.deps.db, item.kind, item.name);
    const forgotten = missing.map((item) => item.itemId);
    if (forgotten.length > 0) await recordAudit(this.deps.db, actor, { type: 'sync.cleaned', message: `forgot ${forgotten.length} missing item(s)`, data: { itemIds: forgotten } });
    return { forgotten, message: `forgot ${forgotten.length} missing item(s)` };
  }
}
