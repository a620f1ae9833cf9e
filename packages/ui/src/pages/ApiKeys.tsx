import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { AdminOnly } from '../components/RoleGates';
import { ErrorNote, Loading, Page, SecretOnce, Time, useAction } from '../components/common';
import { useResource } from '../lib/use-resource';

type KeyRole = Schemas['ApiKey']['role'];
const ROLES: KeyRole[] = ['admin', 'manager', 'operator', 'viewer'];

function ApiKeysPage() {
  const keys = useResource(() => unwrap(api.GET('/api-keys')), []);
  const [act, busy, error] = useAction();
  const [form, setForm] = useState({ name: '', description: '', role: 'viewer' as KeyRole });
  const [secret, setSecret] = useState<string | undefined>();
  const create = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const created = await unwrap(api.POST('/api-keys', { body: form }));
      setSecret(created.key);
      setForm({ name: '', description: '', role: 'viewer' });
    }).then(keys.reload);
  };
  const remove = (keyId: string, name: string) => {
    if (window.confirm(`Delete API key ${name}? Clients using it lose access at once.`)) void act(() => unwrap(api.DELETE('/api-keys/{keyId}', { params: { path: { keyId } } }))).then(keys.reload);
  };
  return (
    <Page title="API keys">
      <ErrorNote error={keys.error ?? error} />
      <form className="filters" onSubmit={create} aria-label="New API key">
        <input aria-label="Key name" placeholder="name" required maxLength={100} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        <input aria-label="Description" placeholder="description" maxLength={500} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
        <select aria-label="Role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as KeyRole })}>
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <SecretOnce what="key" value={secret} />
      {keys.data === undefined ? (
        <Loading what="API keys" />
      ) : (
        <table>
          <caption className="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.apiKeys.map((k) => (
              <tr key={k.id}>
                <th scope="row">
                  {k.name} <span className="muted small">{k.description}</span>
                </th>
                <td>{k.role}</td>
                <td>
                  <code>{k.keyPrefix}…</code>
                </td>
                <td>
                  <Time value={k.createdAt} />
                </td>
                <td>
                  <Time value={k.lastUsedAt} empty="never" />
                </td>
                <td>
                  <button type="button" disabled={busy} onClick={() => remove(k.id, k.name)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

export default function ApiKeys() {
  return (
    <AdminOnly>
      <ApiKeysPage />
    </AdminOnly>
  );
}
