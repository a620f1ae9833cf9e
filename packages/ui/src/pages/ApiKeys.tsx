import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { AdminOnly } from '../components/RoleGates';
import { SecretOnce, Time, useAction } from '../components/common';
import { ListPage, RoleSelect } from '../components/ListPage';
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
  const newKey = (
    <>
      <form className="filters" onSubmit={create} aria-label="New API key">
        <input aria-label="Key name" placeholder="name" required maxLength={100} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        <input aria-label="Description" placeholder="description" maxLength={500} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
        <RoleSelect label="Role" value={form.role} roles={ROLES} onChange={(role) => setForm({ ...form, role })} />
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <SecretOnce what="key" value={secret} />
    </>
  );
  return (
    <ListPage
      title="API keys"
      what="API keys"
      error={keys.error ?? error}
      form={newKey}
      items={keys.data?.apiKeys}
      columns={['Name', 'Role', 'Prefix', 'Created', 'Last used', 'Actions']}
      row={(k) => (
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
      )}
    />
  );
}

export default function ApiKeys() {
  return (
    <AdminOnly>
      <ApiKeysPage />
    </AdminOnly>
  );
}
