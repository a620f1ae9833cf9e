import {
  BadRequestError, ForbiddenError, NotFoundError, ServiceUnavailableError, SyncConflictError, toError,
} from '@trellis/core';
import {
  contentHash, deleteSyncItem, deleteSyncItems, getSyncConfig, listSyncItems, putSyncConfig, recordSyncedCommit, swapStoredFiles, withSyncLock,
  type Db, type Queryable, type StoredFileSwap, type StoredFileSwapOutcome, type SyncConfigRecord, type SyncItemRecord,
} from '@trellis/store';
import type { SecretKeyring } from '../profiles/secret-keyring.js';
import { KeyedTurns } from '../concurrency/keyed-turns.js';
import { SYNC_TOKEN_SECRET_ID } from './sync-token-id.js';
import type { StoredKindCache } from '../stored-files/stored-kind-cache.js';
import type { Actor } from '../auth/principal.js';
import { recordAudit } from '../auth/audit.js';
import type { Logger } from '../logging/logger.js';
import { GitRemote, RemoteError, type FileChanges, type RemoteAccess } from './git-remote.js';
import { DEFAULT_SYNC_SETTINGS, syncSettingsSchema, type SyncSettings } from './sync-settings.js';
import { itemIdOf, itemOfFile, parseItemId, relativeFileOf, statusOf, SYNC_STATUSES, type ItemRef, type SyncKind, type SyncStatus } from './sync-items.js';
import { bothChanged, SyncStateChanges } from './sync-state-changes.js';


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
  /** Awaited by a pull between its plan and its write (tests land an API edit in that window). */
  pullWindow?: (() => Promise<void>) | undefined;
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

const keyOf = (ref: { kind: string; name: string }): string => `${ref.kind}:${ref.name}`;
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
  /**
   * In-process turns: `sync` because PGlite's lock excludes nothing and two requests here should
   * not interleave either; `clone` because two fetches, or a fetch and a push, must not write
   * into this coordinator's clone at once.
   */
  private readonly turns = new KeyedTurns<'sync' | 'clone'>();

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
    return this.turns.run('sync', () => withSyncLock(this.deps.db, fn));
  }

  /** One operation on the clone at a time on this coordinator (each coordinator has its own clone). */
  private git<T>(fn: () => Promise<T>): Promise<T> {
    return this.turns.run('clone', fn);
  }

  /**
   * Writes files only where they are still as the step read them (see swapStoredFiles), with
   * the state `record` gathers from the outcomes in the same transaction; the caches have the
   * files before it resolves.
   */
  private async swap(swaps: StoredFileSwap[], record: (outcomes: StoredFileSwapOutcome[]) => { changes: SyncStateChanges; commit?: string | undefined }): Promise<StoredFileSwapOutcome[]> {
    const { outcomes } = await swapStoredFiles(this.deps.db, swaps, { by: SYNC_WRITER, origin: this.deps.dags.origin }, async (tx: Queryable, done) => {
      const { changes, commit } = record(done);
      await changes.write(tx, commit);
    });
    const written = new Set(outcomes.filter((o) => o.outcome === 'written').map((o) => o.kind));
    await Promise.all([...written].map((kind) => this.cache(kind as SyncKind).catchUp()));
    return outcomes;
  }

  /** The swap of one item from the content the step read (`item.local`) to `content` (null: delete). */
  private swapOf(item: Item, content: string | null): StoredFileSwap {
    return { kind: item.kind, name: item.name, content, expectedHash: hashOf(item.local) ?? null };
  }

  /** Fetches and reads the repository's files under the sync path: everything a step needs from the network. */
  private async snapshot(requirePush: boolean): Promise<Snapshot> {
    const record = await getSyncConfig(this.deps.db);
    const settings = this.settingsOf(record);
    if (!settings.enabled || settings.repository === '') throw new BadRequestError('repository sync is not enabled: configure it with PUT /sync/config');
    if (requirePush && !settings.pushEnabled) throw new BadRequestError('repository sync is in read-only mode (pushEnabled: false): nothing is pushed to the repository');
    const access = this.access(settings, record);
    return this.git(async () => {
      const head = await this.remote.fetch(access);
      const remote = new Map<string, string>();
      for (const [relative, content] of await this.remote.files(head, settings.path)) {
        const ref = itemOfFile(relative);
        if (ref !== undefined) remote.set(keyOf(ref), content);
      }
      return { settings, access, head, remote };
    });
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
      const plans = items.map((item) => ({ item, plan: this.planPull(snap, item) }));
      await this.deps.pullWindow?.();
      const result = await this.applyPull(snap, plans);
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
   * Writes what the plans decided, files of both kinds and the state in one transaction. Each
   * file is written only if it still holds what the plan read: one changed here in between (an
   * API edit) is kept, recorded as changed on both sides and reported as a conflict.
   */
  private async applyPull(snap: Snapshot, plans: Array<{ item: Item; plan: PullPlan }>): Promise<Pick<SyncOutcome, 'synced' | 'modified' | 'conflicts'>> {
    const result = { synced: [] as string[], modified: [] as string[], conflicts: [] as string[] };
    const swaps = plans.flatMap(({ item, plan }) => (plan.write !== undefined ? [this.swapOf(item, plan.write)] : []));
    await this.swap(swaps, (outcomes) => {
      const stale = new Set(outcomes.filter((o) => o.outcome === 'stale').map(keyOf));
      const changes = new SyncStateChanges();
      for (const { item, plan } of plans) {
        const content = snap.remote.get(keyOf(item));
        if (stale.has(keyOf(item))) {
          changes.put(bothChanged(item, item.row, content, snap.head));
          result.conflicts.push(item.itemId);
          continue;
        }
        if (plan.verdict !== undefined) result[plan.verdict].push(item.itemId);
        if (plan.state === 'drop') changes.drop(item);
        else if (plan.state === 'agree' && content !== undefined) changes.agreed(item, content, snap.head);
        else if (typeof plan.state === 'object') changes.put({ kind: item.kind, name: item.name, ...plan.state });
      }
      return { changes, commit: snap.head };
    });
    return result;
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
    const remoteContent = item.row !== undefined ? ((await this.repositoryCopy(settings, item.row)) ?? '') : '';
    return { itemId, filePath: this.filePath(settings, item), status, localContent: item.local ?? '', remoteContent };
  }

  /**
   * The repository's copy of an item, for a reader (diff), without the cluster sync lock: a
   * read changes no shared state, and taking the writers' lock would make a diff wait for a
   * whole pull (network included) and a pull wait for a diff's fetch. The state's `remoteHash`
   * says which version the last fetch (by any coordinator) saw; this coordinator's clone holds
   * it unless another coordinator made that fetch, so most diffs read the clone alone. That
   * read shares no parsed-pack cache, so a fetch writing into the clone meanwhile can at worst
   * make it fail, and then it fetches. Only a clone behind the state fetches, and then under
   * this coordinator's clone turn alone (two fetches must not write one clone at once), so it
   * waits at most for this coordinator's own git operation, never for another's pull.
   */
  private async repositoryCopy(settings: SyncSettings, row: SyncItemRecord): Promise<string | undefined> {
    const path = this.filePath(settings, row);
    const local = await this.remote.fetchedFile(settings.branch, path).catch(() => null);
    if (local !== null && (hashOf(local) ?? null) === row.remoteHash) return local;
    const record = await getSyncConfig(this.deps.db);
    const access = this.access(settings, record);
    return this.git(async () => this.remote.fileAt(await this.remote.fetch(access), path)).catch((error: unknown) => this.remoteFailure(error));
  }

  /** A 409 unless forced when the repository's copy is no longer the one this side last agreed with. */
  private async checkConflict(snap: Snapshot, item: Item, force: boolean): Promise<void> {
    if (force) return;
    const remoteHash = hashOf(snap.remote.get(keyOf(item)));
    const base = item.row === undefined ? undefined : item.row.syncedHash ?? 'never-agreed';
    if (remoteHash === base || remoteHash === hashOf(item.local)) return;
    const change = await this.git(() => this.remote.lastChange(snap.head, this.filePath(snap.settings, item)));
    throw new SyncConflictError(`${item.itemId} was changed in the repository since it was last synced (${change.oid.slice(0, 12)} by ${change.author}): pull, or publish with force`, {
      itemId: item.itemId, remoteCommit: change.oid, remoteAuthor: change.author, remoteMessage: change.message,
    });
  }

  /** Commits the changes (paths relative to the sync path) and pushes them; the new commit. Nothing is recorded here. */
  private push(snap: Snapshot, changes: Array<{ ref: ItemRef; content: string | null }>, message: string): Promise<string> {
    const files: FileChanges = new Map(changes.map(({ ref, content }) => [this.filePath(snap.settings, ref), content]));
    const author = { name: snap.settings.commit.authorName, email: snap.settings.commit.authorEmail };
    return this.git(() => this.remote.commitAndPush(snap.access, snap.head, files, message, author));
  }

  /** Pushes the changes and records what both sides now agree on, in one transaction. */
  private async commit(snap: Snapshot, changes: Array<{ ref: ItemRef; content: string | null }>, message: string): Promise<string> {
    const oid = await this.push(snap, changes, message);
    const state = new SyncStateChanges();
    for (const { ref, content } of changes) {
      if (content === null) state.drop(ref);
      else state.agreed(ref, content, oid);
    }
    await this.deps.db.transaction((tx) => state.write(tx, oid));
    return oid;
  }

  /**
   * A repository that cannot be reached or refuses us, on the endpoints that answer a message
   * rather than a pull-shaped result (diff, discard, delete, delete-missing, move): 503
   * `service_unavailable`. Their rows list 400/404/409, but those are the request's own faults
   * (bad or unknown item, read-only mode, someone else pushed), and none fits here: the request
   * was valid and the step may succeed unchanged later. The contract's general rules have the
   * status and code for that: `service_unavailable` is in its code list and 503 its status
   * when something the service needs is not there (as the database or the identity provider
   * answer elsewhere in this server); 500 would say the server failed, which it did not. The
   * message names the repository's host, never the token (see GitRemote).
   */
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

  /**
   * Back to the repository's version: this side's change is dropped (a missing item comes back),
   * file and state in one transaction. A change made here after this step read the item is not
   * dropped unseen: the item is then left as it is.
   */
  async discard(actor: Actor, itemId: string): Promise<{ message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const { item, status } = await this.item(itemId);
      if (status === 'untracked') throw new BadRequestError(`${itemId} is untracked: the repository has no version of it to go back to`, { itemId });
      const snap = await this.snapshot(false).catch((error: unknown) => this.remoteFailure(error));
      const remote = snap.remote.get(keyOf(item));
      const [outcome] = await this.swap([this.swapOf(item, remote ?? null)], ([done]) => {
        const changes = new SyncStateChanges();
        if (done?.outcome === 'stale') return { changes };
        if (remote === undefined) changes.drop(item);
        else changes.agreed(item, remote, snap.head);
        return { changes };
      });
      if (outcome?.outcome === 'stale') return { message: `${itemId} changed here while it was being discarded: it was left as it is; discard again to drop that change too` };
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

  /**
   * Removes the item from the repository (one commit), then from this side and from the state
   * in one transaction. Should the process die between the push and that transaction, the file
   * and its state are here as before: a synced item is then deleted here by the next pull, as
   * the repository no longer has it; a modified one shows in conflict.
   */
  async delete(actor: Actor, itemId: string, message: string | undefined, force: boolean): Promise<{ message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const { item, status, settings } = await this.item(itemId);
      if (!settings.pushEnabled) throw new BadRequestError('repository sync is in read-only mode (pushEnabled: false): nothing is deleted from the repository', { itemId });
      if (status === 'untracked') throw new BadRequestError(`${itemId} is untracked: it is not in the repository`, { itemId });
      if (status === 'modified' && !force) throw new BadRequestError(`${itemId} has local changes: delete with force to drop them`, { itemId });
      const snap = await this.snapshot(true).catch((error: unknown) => this.remoteFailure(error));
      const oid = snap.remote.has(keyOf(item)) ? await this.push(snap, [{ ref: item, content: null }], message ?? `Delete ${itemId}`).catch((error: unknown) => this.remoteFailure(error)) : undefined;
      // A change made here since this step read the item is kept: the file stays, untracked.
      await this.swap(item.local !== undefined ? [this.swapOf(item, null)] : [], () => {
        const changes = new SyncStateChanges();
        changes.drop(item);
        return { changes, commit: oid };
      });
      await recordAudit(this.deps.db, actor, { type: 'sync.deleted', message: `deleted ${itemId} from the repository`, data: { itemId } });
      return { message: `${itemId} deleted from the repository and here` };
    });
  }

  /** Deletes from the repository every item that is missing here (one commit), then their state in one transaction. */
  async deleteMissing(actor: Actor, message: string | undefined): Promise<{ deleted: string[]; message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const snap = await this.snapshot(true).catch((error: unknown) => this.remoteFailure(error));
      const missing = (await this.items()).filter((item) => this.view(snap.settings, item)?.status === 'missing');
      const inRepository = missing.filter((item) => snap.remote.has(keyOf(item)));
      const oid = inRepository.length > 0 ? await this.push(snap, inRepository.map((ref) => ({ ref, content: null })), message ?? `Delete ${inRepository.length} item(s)`).catch((error: unknown) => this.remoteFailure(error)) : undefined;
      await this.deps.db.transaction(async (tx) => {
        await deleteSyncItems(tx, missing);
        if (oid !== undefined) await recordSyncedCommit(tx, oid);
      });
      const deleted = missing.map((item) => item.itemId);
      if (deleted.length > 0) await recordAudit(this.deps.db, actor, { type: 'sync.deleted', message: `deleted ${deleted.length} missing item(s) from the repository`, data: { itemIds: deleted } });
      return { deleted, message: deleted.length === 0 ? 'no missing items' : `deleted ${deleted.length} missing item(s)` };
    });
  }

  /**
   * Renames an item in the repository (one commit), then here: the rename and the state change
   * in one transaction after the push. Should the process die between the push and that
   * transaction, nothing is lost: the file is still here under its old name with the state it
   * had, so the next status shows it as before the move; the next pull then completes the move
   * for a synced item (the old name, gone from the repository and unchanged here, is deleted;
   * the new one comes in), and shows a modified one in conflict. A DAG stays a DAG and a
   * document a document.
   */
  async move(actor: Actor, itemId: string, newItemId: string, message: string | undefined, force: boolean): Promise<{ message: string }> {
    this.requireWriteDags();
    return this.exclusive(async () => {
      const target = parseItemId(newItemId);
      if (target === undefined) throw new BadRequestError('newItemId must be a DAG file name or docs/ and a document id', { newItemId });
      const { item, settings } = await this.item(itemId);
      if (target.kind !== item.kind) throw new BadRequestError('an item cannot move between DAGs and documents', { itemId, newItemId });
      if (!settings.pushEnabled) throw new BadRequestError('repository sync is in read-only mode (pushEnabled: false): nothing is moved in the repository', { itemId });
      const content = item.local;
      if (content === undefined) throw new BadRequestError(`${itemId} is missing here: nothing to move`, { itemId });
      const snap = await this.snapshot(true).catch((error: unknown) => this.remoteFailure(error));
      await this.checkConflict(snap, item, force);
      if (this.cache(target.kind).get(target.name)?.content != null || snap.remote.has(keyOf(target))) throw new SyncConflictError(`${newItemId} exists already`, { itemId, remoteCommit: snap.head, remoteAuthor: '', remoteMessage: '' });
      const oid = await this.push(snap, [{ ref: item, content: null }, { ref: target, content }], message ?? `Move ${itemId} to ${newItemId}`).catch((error: unknown) => this.remoteFailure(error));
      const targetItem: Item = { ...target, itemId: newItemId, local: undefined, row: undefined };
      await this.swap([this.swapOf(item, null), this.swapOf(targetItem, content)], (outcomes) => {
        const stale = new Set(outcomes.filter((o) => o.outcome === 'stale').map(keyOf));
        const changes = new SyncStateChanges();
        // Either name changed here meanwhile: that file is kept, and shows in conflict with the repository.
        if (stale.has(keyOf(item))) changes.put(bothChanged(item, item.row, undefined, oid));
        else changes.drop(item);
        if (stale.has(keyOf(target))) changes.put(bothChanged(target, undefined, content, oid));
        else changes.agreed(target, content, oid);
        return { changes, commit: oid };
      });
      await recordAudit(this.deps.db, actor, { type: 'sync.moved', message: `moved ${itemId} to ${newItemId}`, data: { itemId, newItemId } });
      return { message: `${itemId} moved to ${newItemId}` };
    });
  }

  /** Drops the state entries of missing items; the repository is not touched. */
  async cleanup(actor: Actor): Promise<{ forgotten: string[]; message: string }> {
    this.requireWriteDags();
    const missing = (await this.items()).filter((item) => item.row !== undefined && item.local === undefined);
    await deleteSyncItems(this.deps.db, missing);
    const forgotten = missing.map((item) => item.itemId);
    if (forgotten.length > 0) await recordAudit(this.deps.db, actor, { type: 'sync.cleaned', message: `forgot ${forgotten.length} missing item(s)`, data: { itemIds: forgotten } });
    return { forgotten, message: `forgot ${forgotten.length} missing item(s)` };
  }
}
