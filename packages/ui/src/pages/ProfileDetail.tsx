import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { layerCalls, layerTitle, type Layer, type Profile, type ProfileEntry } from '../api/profile-layers';
import { ProfileReadersOnly } from '../components/RoleGates';
import { ErrorNote, Loading, Page, Time, useAction } from '../components/common';
import { useAuth } from '../lib/auth';
import { useResource } from '../lib/use-resource';

type Kind = ProfileEntry['kind'];

/** The layer a page path names: `/profiles/_global`, `/profiles/_workspaces/<name>`, `/profiles/<name>`. */
function useLayer(): Layer {
  const { profileName = '', workspace } = useParams();
  if (workspace !== undefined) return { scope: 'workspace', workspace };
  if (profileName === '_global') return { scope: 'global' };
  return { scope: 'profile', name: profileName };
}

/**
 * Sets one entry. A secret's value is typed into a password field, sent once and cleared: the
 * page never holds it after the answer and no answer carries it back.
 */
function EntryForm({ draft, onSet }: { draft: { key: string; kind: Kind; value: string; at: number }; onSet: (key: string, kind: Kind, value: string) => Promise<boolean> }) {
  const [form, setForm] = useState(draft);
  const valueField = useRef<HTMLInputElement>(null);
  // A draft from a row's Edit or Rotate (the form is keyed by it) puts the cursor on the value.
  useEffect(() => {
    if (draft.at !== 0) valueField.current?.focus();
  }, [draft.at]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void onSet(form.key, form.kind, form.value).then((ok) => {
      if (ok) setForm({ key: '', kind: form.kind, value: '', at: form.at });
      else if (form.kind === 'secret') setForm((f) => ({ ...f, value: '' }));
    });
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Set an entry">
      <input aria-label="Entry key" placeholder="KEY" required maxLength={255} pattern="[A-Za-z_][A-Za-z0-9_]*" title="a letter or _, then letters, digits, _" value={form.key} onChange={(e) => setForm({ ...form, key: e.target.value })} />
      <select aria-label="Entry kind" value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value as Kind, value: '' })}>
        <option value="variable">variable</option>
        <option value="secret">secret (write-only)</option>
      </select>
      <input
        ref={valueField}
        aria-label={form.kind === 'secret' ? 'Secret value' : 'Variable value'}
        placeholder="value"
        type={form.kind === 'secret' ? 'password' : 'text'}
        autoComplete="off"
        maxLength={65536}
        value={form.value}
        onChange={(e) => setForm({ ...form, value: e.target.value })}
      />
      <button type="submit">{form.kind === 'secret' ? 'Set secret' : 'Set variable'}</button>
    </form>
  );
}

function Entries({ profile, canChange, onEdit, onDelete, busy }: { profile: Profile; canChange: boolean; onEdit: (entry: ProfileEntry) => void; onDelete: (key: string) => void; busy: boolean }) {
  if (profile.entries.length === 0) return <p className="muted">No entries.</p>;
  return (
    <table>
      <caption className="visually-hidden">Entries</caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Kind</th>
          <th scope="col">Value</th>
          <th scope="col">Updated</th>
          {canChange ? <th scope="col">Actions</th> : null}
        </tr>
      </thead>
      <tbody>
        {profile.entries.map((e) => (
          <tr key={e.key}>
            <th scope="row">
              <code>{e.key}</code>
            </th>
            <td>{e.kind}</td>
            <td>{e.kind === 'secret' ? <span className="muted">write-only{e.secretId !== undefined ? ` (secret ${e.secretId.slice(0, 8)})` : ''}</span> : <code>{e.value}</code>}</td>
            <td>
              <Time value={e.updatedAt} />
            </td>
            {canChange ? (
              <td>
                <button type="button" disabled={busy} onClick={() => onEdit(e)} aria-label={`${e.kind === 'secret' ? 'Rotate' : 'Edit'} ${e.key}`}>
                  {e.kind === 'secret' ? 'Rotate' : 'Edit'}
                </button>{' '}
                <button type="button" disabled={busy} onClick={() => onDelete(e.key)} aria-label={`Delete ${e.key}`}>
                  Delete
                </button>
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Description({ profile, canChange, onSave }: { profile: Profile; canChange: boolean; onSave: (description: string) => void }) {
  const [text, setText] = useState<string | undefined>();
  if (!canChange) return profile.description !== '' ? <p>{profile.description}</p> : null;
  return (
    <form
      className="filters"
      aria-label="Description"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(text ?? profile.description);
        setText(undefined);
      }}
    >
      <input aria-label="Description" placeholder="description" maxLength={500} value={text ?? profile.description} onChange={(e) => setText(e.target.value)} />
      <button type="submit" disabled={text === undefined}>
        Save description
      </button>
    </form>
  );
}

/** One profile or defaults layer: its entries, set and delete them, and (named profiles) status, protection, deletion. */
function ProfilePage() {
  const layer = useLayer();
  const key = JSON.stringify(layer);
  const calls = useMemo(() => layerCalls(layer), [key]);
  const profile = useResource(calls.get, [key]);
  const { can } = useAuth();
  const navigate = useNavigate();
  const [act, busy, error] = useAction();
  const [notice, setNotice] = useState<string | undefined>();
  const [draft, setDraft] = useState<{ key: string; kind: Kind; value: string; at: number }>({ key: '', kind: 'variable', value: '', at: 0 });
  const p = profile.data;
  // Protected profiles are the admin's alone; otherwise managers and admins change profiles.
  const canChange = can('profiles') && (p?.protected !== true || can('admin'));
  const change = (what: () => Promise<unknown>, done?: string) =>
    act(async () => {
      setNotice(undefined);
      await what();
      if (done !== undefined) setNotice(done);
    }).then((ok) => {
      profile.reload();
      return ok;
    });
  const setEntry = (entryKey: string, kind: Kind, value: string) =>
    change(() => (kind === 'secret' ? calls.setSecret(entryKey, value) : calls.setVariable(entryKey, value)), kind === 'secret' ? `Secret ${entryKey} set; its value is not shown again.` : `Variable ${entryKey} set.`);
  const title = layerTitle(layer);
  return (
    <Page
      title={title}
      actions={
        layer.scope === 'profile' && p !== undefined && canChange ? (
          <>
            <button type="button" disabled={busy} onClick={() => void change(() => calls.update({ status: p.status === 'active' ? 'disabled' : 'active' }))}>
              {p.status === 'active' ? 'Disable' : 'Enable'}
            </button>
            {can('admin') ? (
              <button type="button" disabled={busy} onClick={() => void change(() => calls.update({ protected: !p.protected }))}>
                {p.protected ? 'Unprotect' : 'Protect'}
              </button>
            ) : null}
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                if (window.confirm(`Delete profile ${layer.name} with its entries and secrets?`))
                  void act(() => unwrap(api.DELETE('/profiles/{profileName}', { params: { path: { profileName: layer.name } } }))).then((ok) => ok && navigate('/profiles'));
              }}
            >
              Delete
            </button>
          </>
        ) : undefined
      }
    >
      <p>
        <Link to="/profiles">All profiles</Link>
        {layer.scope === 'workspace' ? ' · applies to DAGs labelled ' : null}
        {layer.scope === 'workspace' ? <code>workspace={layer.workspace}</code> : null}
      </p>
      <ErrorNote error={profile.error ?? error} />
      {notice !== undefined ? <p role="status">{notice}</p> : null}
      {p === undefined ? (
        profile.error === undefined ? <Loading what="the profile" /> : null
      ) : (
        <>
          {layer.scope === 'profile' ? (
            <p data-testid="profile-state">
              <span className={`badge tone-${p.status === 'active' ? 'ok' : 'idle'}`}>{p.status}</span>
              {p.protected ? <span className="badge tone-waiting">protected</span> : null}
              {p.status === 'disabled' ? <span className="muted small"> New runs cannot use it.</span> : null}
            </p>
          ) : null}
          <Description profile={p} canChange={canChange} onSave={(description) => void change(() => calls.update({ description }))} />
          <h2>Entries</h2>
          {canChange ? <EntryForm key={draft.at} draft={draft} onSet={setEntry} /> : null}
          <Entries
            profile={p}
            canChange={canChange}
            busy={busy}
            onEdit={(e) => setDraft({ key: e.key, kind: e.kind, value: e.kind === 'variable' ? (e.value ?? '') : '', at: Date.now() })}
            onDelete={(entryKey) => {
              if (window.confirm(`Delete ${entryKey}?`)) void change(() => calls.deleteEntry(entryKey), `${entryKey} deleted.`);
            }}
          />
        </>
      )}
    </Page>
  );
}

export default function ProfileDetail() {
  return (
    <ProfileReadersOnly>
      <ProfilePage />
    </ProfileReadersOnly>
  );
}
