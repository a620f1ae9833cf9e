import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { layerPath } from '../api/profile-layers';
import { ProfileReadersOnly } from '../components/RoleGates';
import { ErrorNote, Loading, Page, Time, useAction } from '../components/common';
import { useAuth } from '../lib/auth';
import { useResource } from '../lib/use-resource';

function NewProfile({ onCreated }: { onCreated: () => void }) {
  const { can } = useAuth();
  const [act, busy, error] = useAction();
  const [form, setForm] = useState({ name: '', description: '', protected: false });
  if (!can('profiles')) return null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = { name: form.name, ...(form.description !== '' ? { description: form.description } : {}), ...(form.protected ? { protected: true } : {}) };
    void act(() => unwrap(api.POST('/profiles', { body }))).then((ok) => {
      if (ok) setForm({ name: '', description: '', protected: false });
      onCreated();
    });
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="New profile">
      <input aria-label="Profile name" placeholder="name (lowercase)" required maxLength={128} pattern="[a-z0-9][a-z0-9._\-]*" title="a lowercase letter or digit, then lowercase letters, digits, '.', '_', '-'" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
      <input aria-label="Profile description" placeholder="description" maxLength={500} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
      {/* Only admins may create a protected profile. */}
      {can('admin') ? (
        <label>
          <input type="checkbox" checked={form.protected} onChange={(e) => setForm({ ...form, protected: e.target.checked })} /> protected
        </label>
      ) : null}
      <button type="submit" disabled={busy}>
        Create profile
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function ProfilesPage() {
  const profiles = useResource(() => unwrap(api.GET('/profiles')), []);
  const workspaces = useResource(() => unwrap(api.GET('/workspaces')), []);
  return (
    <Page title="Runtime profiles">
      <p className="muted">
        Named sets of environment variables and write-only secrets for runs. A run gets the Global defaults, then its workspace&apos;s defaults, then the profile it names; a later layer wins for the same key.
      </p>
      <section aria-labelledby="defaults-title">
        <h2 id="defaults-title">Defaults</h2>
        <ul className="inline-list">
          <li>
            <Link to={layerPath({ scope: 'global' })}>Global defaults</Link>
          </li>
          {(workspaces.data?.workspaces ?? []).map((w) => (
            <li key={w.id}>
              <Link to={layerPath({ scope: 'workspace', workspace: w.name })}>Workspace {w.name}</Link>
            </li>
          ))}
        </ul>
        <ErrorNote error={workspaces.error} />
      </section>
      <h2>Profiles</h2>
      <NewProfile onCreated={profiles.reload} />
      <ErrorNote error={profiles.error} />
      {profiles.data === undefined ? (
        profiles.error === undefined ? <Loading what="profiles" /> : null
      ) : profiles.data.profiles.length === 0 ? (
        <p className="muted">No profiles yet.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Runtime profiles</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Status</th>
              <th scope="col">Entries</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {profiles.data.profiles.map((p) => (
              <tr key={p.name}>
                <th scope="row">
                  <Link to={layerPath({ scope: 'profile', name: p.name })}>{p.name}</Link>
                </th>
                <td>{p.description}</td>
                <td>
                  <span className={`badge tone-${p.status === 'active' ? 'ok' : 'idle'}`}>{p.status}</span>
                  {p.protected ? <span className="badge tone-waiting">protected</span> : null}
                </td>
                <td>
                  {p.entries.filter((e) => e.kind === 'variable').length} variable(s), {p.entries.filter((e) => e.kind === 'secret').length} secret(s)
                </td>
                <td>
                  <Time value={p.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

export default function Profiles() {
  return (
    <ProfileReadersOnly>
      <ProfilesPage />
    </ProfileReadersOnly>
  );
}
