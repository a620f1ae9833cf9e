import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNote, Loading, Page, Time, useAction } from '../components/common';
import { useAuth } from '../lib/auth';
import { useResource } from '../lib/use-resource';

type Config = Schemas['SyncConfig'];
type Item = Schemas['SyncItem'];
type Outcome = Schemas['SyncResult'];

const STATUSES = ['synced', 'modified', 'untracked', 'conflict', 'missing'] as const;
const TONES: Record<Item['status'], string> = { synced: 'ok', modified: 'waiting', untracked: 'queued', conflict: 'failed', missing: 'aborted' };

interface ConflictBody {
  itemId: string;
  remoteCommit: string;
  remoteAuthor: string;
  remoteMessage: string;
  message: string;
}

/** A 409 of publish or move: the repository changed the item since the last sync, by whom and how. */
class SyncConflict extends Error {
  constructor(readonly conflict: ConflictBody) {
    super(conflict.message);
    this.name = 'SyncConflict';
  }
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** As unwrap, but a conflict keeps its body (remote commit, author, message) for the page to show. */
async function unwrapConflict<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const result = await call;
  if (result.response.status === 409) throw new SyncConflict(result.error as ConflictBody);
  return unwrap(Promise.resolve(result));
}

/** What a pull or publish did, in one line per list. */
function OutcomeNote({ outcome }: { outcome: Outcome | string | undefined }) {
  if (outcome === undefined) return null;
  if (typeof outcome === 'string') return <p role="status">{outcome}</p>;
  const lists = [
    ['synced', outcome.synced],
    ['modified', outcome.modified],
    ['conflicts', outcome.conflicts],
    ['errors', outcome.errors],
  ] as const;
  return (
    <div role="status" className={outcome.success ? 'card' : 'error'} data-testid="sync-outcome">
      {outcome.message}
      {lists
        .filter(([, items]) => items.length > 0)
        .map(([name, items]) => (
          <div key={name} className="small">
            {name}: {items.join(', ')}
          </div>
        ))}
    </div>
  );
}

function ConflictNote({ error, onForce }: { error: Error | undefined; onForce: (() => void) | undefined }) {
  if (!(error instanceof SyncConflict)) return <ErrorNote error={error} />;
  const { itemId, remoteCommit, remoteAuthor, remoteMessage, message } = error.conflict;
  return (
    <div className="error" role="alert" data-testid="sync-conflict">
      <div>{message}</div>
      <div className="small">
        {itemId} was changed in the repository by commit <code>{remoteCommit.slice(0, 12)}</code> of {remoteAuthor}: “{remoteMessage}”
      </div>
      {onForce !== undefined ? (
        <button type="button" onClick={onForce}>
          Overwrite the repository&apos;s version
        </button>
      ) : null}
    </div>
  );
}

/** The settings; the token is write-only: the page says whether one is set, never what it is. */
function ConfigForm({ config, onSaved }: { config: Config; onSaved: () => void }) {
  const { can } = useAuth();
  const [draft, setDraft] = useState(config);
  const [token, setTokenText] = useState('');
  const [changingToken, setChangingToken] = useState(config.auth.type !== 'token');
  const [act, busy, error] = useAction();
  const [tested, setTested] = useState<string | undefined>();
  const admin = can('admin');
  const set = <K extends keyof Config>(key: K, value: Config[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const save = (event: FormEvent) => {
    event.preventDefault();
    const auth = draft.auth.type === 'token' && token !== '' ? { type: 'token' as const, token } : { type: draft.auth.type };
    void act(() => unwrap(api.PUT('/sync/config', { body: { ...draft, auth } }))).then((ok) => {
      if (!ok) return;
      setTokenText('');
      setChangingToken(false);
      onSaved();
    });
  };
  const test = () => void act(() => unwrap(api.POST('/sync/test-connection')).then((r) => setTested(`${r.success ? 'Connected' : 'Cannot connect'}: ${r.message}`)));
  return (
    <form onSubmit={save} aria-label="Sync settings" className="sync-settings">
      <fieldset disabled={!admin || busy}>
        <legend>Settings{admin ? '' : ' (administrators change them)'}</legend>
        <label>
          <input type="checkbox" checked={draft.enabled} onChange={(e) => set('enabled', e.target.checked)} /> Sync enabled
        </label>
        <label>
          Repository URL <input value={draft.repository} placeholder="https://git.example.com/team/dags.git" onChange={(e) => set('repository', e.target.value)} />
        </label>
        <label>
          Branch <input value={draft.branch} required onChange={(e) => set('branch', e.target.value)} />
        </label>
        <label>
          Folder in the repository <input value={draft.path} placeholder="(the root)" onChange={(e) => set('path', e.target.value)} />
        </label>
        <label>
          <input type="checkbox" checked={draft.pushEnabled} onChange={(e) => set('pushEnabled', e.target.checked)} /> Publish to the repository (off: read-only mode)
        </label>
        <label>
          Authentication{' '}
          <select aria-label="Authentication" value={draft.auth.type} onChange={(e) => set('auth', { type: e.target.value === 'token' ? 'token' : 'none' })}>
            <option value="none">none</option>
            <option value="token">token</option>
          </select>
        </label>
        {draft.auth.type === 'token' ? (
          changingToken ? (
            <label>
              Token <input type="password" autoComplete="off" value={token} placeholder={config.auth.type === 'token' ? 'leave empty to keep the one set' : ''} onChange={(e) => setTokenText(e.target.value)} />
            </label>
          ) : (
            <span>
              A token is set.{' '}
              <button type="button" onClick={() => setChangingToken(true)}>
                Change token
              </button>
            </span>
          )
        ) : null}
        <label>
          <input type="checkbox" checked={draft.autoSync.enabled} onChange={(e) => set('autoSync', { ...draft.autoSync, enabled: e.target.checked })} /> Pull automatically
        </label>
        <label>
          <input type="checkbox" checked={draft.autoSync.onStartup} onChange={(e) => set('autoSync', { ...draft.autoSync, onStartup: e.target.checked })} /> Pull on startup
        </label>
        <label>
          Seconds between pulls <input type="number" min={1} value={draft.autoSync.interval} onChange={(e) => set('autoSync', { ...draft.autoSync, interval: Number(e.target.value) })} />
        </label>
        <label>
          Commit author <input value={draft.commit.authorName} onChange={(e) => set('commit', { ...draft.commit, authorName: e.target.value })} />
        </label>
        <label>
          Commit email <input value={draft.commit.authorEmail} onChange={(e) => set('commit', { ...draft.commit, authorEmail: e.target.value })} />
        </label>
        <button type="submit" className="primary">
          Save settings
        </button>
      </fieldset>
      <div className="filters">
        <button type="button" disabled={!can('write') || busy} onClick={test}>
          Test connection
        </button>
        {tested !== undefined ? <span role="status">{tested}</span> : null}
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

/** One item's local and repository text, and its rename. */
function ItemPanel({ item, canPush, onChanged }: { item: Item; canPush: boolean; onChanged: (outcome: string) => void }) {
  const diff = useResource(() => unwrap(api.GET('/sync/items/{itemId}/diff', { params: { path: { itemId: item.itemId } } })), [item.itemId, item.status]);
  const [newItemId, setNewItemId] = useState(item.itemId);
  const [act, busy, error] = useAction();
  const move = (force: boolean) =>
    void act(() => unwrapConflict(api.POST('/sync/items/{itemId}/move', { params: { path: { itemId: item.itemId } }, body: { newItemId, force } }))).then((ok) => ok && onChanged(`Moved ${item.itemId} to ${newItemId}.`));
  return (
    <section aria-label={`Item ${item.itemId}`} className="card">
      <h3>{item.displayName}</h3>
      <ErrorNote error={diff.error} />
      {diff.data === undefined ? (
        diff.error === undefined ? <Loading what="the difference" /> : null
      ) : (
        <div className="doc-layout">
          <div>
            <h4>Here</h4>
            <pre data-testid="sync-local">{diff.data.localContent}</pre>
          </div>
          <div>
            <h4>In the repository</h4>
            <pre data-testid="sync-remote">{diff.data.remoteContent}</pre>
          </div>
        </div>
      )}
      <form
        className="filters"
        aria-label={`Move ${item.itemId}`}
        onSubmit={(e) => {
          e.preventDefault();
          move(false);
        }}
      >
        <input aria-label={`New id of ${item.itemId}`} required value={newItemId} onChange={(e) => setNewItemId(e.target.value)} />
        <button type="submit" disabled={!canPush || busy || newItemId === item.itemId}>
          Move
        </button>
      </form>
      <ConflictNote error={error} onForce={canPush ? () => move(true) : undefined} />
    </section>
  );
}

/** The items table with each item's actions; writes that change the repository need push on. */
function Items({ items, canWrite, canPush, onChanged }: { items: Item[]; canWrite: boolean; canPush: boolean; onChanged: (outcome: Outcome | string) => void }) {
  const [open, setOpen] = useState<string | undefined>();
  const [act, busy, error] = useAction();
  const [forcing, setForcing] = useState<string | undefined>();
  const path = (item: Item) => ({ params: { path: { itemId: item.itemId } } });
  const publish = (item: Item, force = false) => {
    setForcing(item.itemId);
    void act(() => unwrapConflict(api.POST('/sync/items/{itemId}/publish', { ...path(item), body: { message: `Publish ${item.itemId}`, force } })).then(onChanged));
  };
  const simple = (item: Item, action: 'discard' | 'forget') =>
    void act(() =>
      unwrap(action === 'discard' ? api.POST('/sync/items/{itemId}/discard', path(item)) : api.POST('/sync/items/{itemId}/forget', path(item))).then((r) => onChanged(r.message)),
    );
  const remove = (item: Item) => {
    if (!window.confirm(`Delete ${item.itemId} from the repository and here?`)) return;
    void act(() => unwrap(api.POST('/sync/items/{itemId}/delete', { ...path(item), body: { message: `Delete ${item.itemId}`, force: item.status === 'modified' } })).then((r) => onChanged(r.message)));
  };
  if (items.length === 0) return <p className="muted">No items: configure the repository and pull.</p>;
  const conflictOf = forcing !== undefined ? items.find((i) => i.itemId === forcing) : undefined;
  return (
    <>
      <ConflictNote error={error} onForce={conflictOf !== undefined && canPush ? () => publish(conflictOf, true) : undefined} />
      <table>
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Kind</th>
            <th scope="col">File</th>
            <th scope="col">Status</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.itemId} data-item={item.itemId} data-status={item.status}>
              <td>{item.displayName}</td>
              <td>{item.kind}</td>
              <td>
                <code>{item.filePath}</code>
              </td>
              <td>
                <span className={`badge tone-${TONES[item.status]}`}>{item.status}</span>
              </td>
              <td>
                <div className="actions">
                  <button type="button" aria-expanded={open === item.itemId} aria-label={`Diff ${item.itemId}`} onClick={() => setOpen(open === item.itemId ? undefined : item.itemId)}>
                    Diff
                  </button>
                  <button type="button" aria-label={`Publish ${item.itemId}`} disabled={!canPush || busy || item.status === 'synced' || item.status === 'missing'} onClick={() => publish(item)}>
                    Publish
                  </button>
                  <button type="button" aria-label={`Discard ${item.itemId}`} disabled={!canWrite || busy || (item.status !== 'modified' && item.status !== 'conflict')} onClick={() => simple(item, 'discard')}>
                    Discard
                  </button>
                  <button type="button" aria-label={`Forget ${item.itemId}`} disabled={!canWrite || busy || item.status === 'synced' || item.status === 'modified'} onClick={() => simple(item, 'forget')}>
                    Forget
                  </button>
                  <button type="button" aria-label={`Delete ${item.itemId}`} disabled={!canPush || busy || item.status === 'untracked'} onClick={() => remove(item)}>
                    Delete
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {items
        .filter((item) => item.itemId === open)
        .map((item) => (
          <ItemPanel key={item.itemId} item={item} canPush={canPush} onChanged={onChanged} />
        ))}
    </>
  );
}

/** Repository sync: settings, status of every item, pull and publish. */
export default function Sync() {
  const { can } = useAuth();
  const config = useResource(() => unwrap(api.GET('/sync/config')), []);
  const status = useResource(() => unwrap(api.GET('/sync/status')), []);
  const [outcome, setOutcome] = useState<Outcome | string | undefined>();
  const [message, setMessage] = useState('');
  const [act, busy, error] = useAction();
  const changed = (result: Outcome | string) => {
    setOutcome(result);
    status.reload();
  };
  const canWrite = can('write');
  // Read-only mode (sync on, publishing off): the repository alone decides, nothing is pushed.
  const readOnly = config.data !== undefined && config.data.enabled && !config.data.pushEnabled;
  const canPush = canWrite && !readOnly;
  const pull = () => void act(() => unwrap(api.POST('/sync/pull')).then(changed));
  const publishAll = () => void act(() => unwrap(api.POST('/sync/publish-all', { body: { message: message !== '' ? message : 'Publish from Trellis' } })).then(changed));
  const deleteMissing = () => void act(() => unwrap(api.POST('/sync/delete-missing', { body: {} })).then((r) => changed(r.message)));
  const cleanup = () => void act(() => unwrap(api.POST('/sync/cleanup')).then((r) => changed(r.message)));
  const s = status.data;
  return (
    <Page title="Repository sync">
      <ErrorNote error={config.error ?? status.error} />
      {s === undefined ? (
        status.error === undefined ? <Loading what="the sync status" /> : null
      ) : (
        <>
          <p data-testid="sync-summary">
            {s.enabled ? 'Enabled' : 'Disabled'}
            {s.repository !== '' ? ` · ${s.repository} (${s.branch})` : ''}
            {readOnly ? ' · read-only mode' : ''} · {s.summary}
          </p>
          <p className="muted small">
            Last sync: <Time value={s.lastSyncAt} empty="never" />
            {s.lastSyncCommit !== '' ? (
              <>
                {' '}
                at <code>{s.lastSyncCommit.slice(0, 12)}</code>
              </>
            ) : null}
          </p>
          <dl className="counts" data-testid="sync-counts">
            {STATUSES.map((name) => (
              <div key={name}>
                <dt>{name}</dt>
                <dd>{s.counts[name]}</dd>
              </div>
            ))}
          </dl>
          <div className="filters">
            <button type="button" className="primary" disabled={!canWrite || busy} onClick={pull}>
              Pull
            </button>
            <input aria-label="Commit message" placeholder="Commit message" value={message} onChange={(e) => setMessage(e.target.value)} />
            <button type="button" disabled={!canPush || busy} onClick={publishAll}>
              Publish all
            </button>
            <button type="button" disabled={!canPush || busy || s.counts.missing === 0} onClick={deleteMissing}>
              Delete missing from the repository
            </button>
            <button type="button" disabled={!canWrite || busy || s.counts.missing === 0} onClick={cleanup}>
              Forget missing
            </button>
          </div>
          <ErrorNote error={error} />
          <OutcomeNote outcome={outcome} />
          <Items items={s.items} canWrite={canWrite} canPush={canPush} onChanged={changed} />
        </>
      )}
      {config.data !== undefined ? (
        <ConfigForm
          key={JSON.stringify(config.data)}
          config={config.data}
          onSaved={() => {
            config.reload();
            status.reload();
          }}
        />
      ) : null}
    </Page>
  );
}
