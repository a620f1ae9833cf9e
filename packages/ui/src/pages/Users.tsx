import { useState, type FormEvent } from 'react';
import { api, unwrap, type Role } from '../api/client';
import { AdminOnly } from '../components/RoleGates';
import { Time, useAction } from '../components/common';
import { ListPage, RoleSelect } from '../components/ListPage';
import { useAuth } from '../lib/auth';
import { useResource } from '../lib/use-resource';

const ROLES: Role[] = ['admin', 'manager', 'developer', 'operator', 'viewer'];

function UsersPage() {
  const users = useResource(() => unwrap(api.GET('/users')), []);
  const { principal } = useAuth();
  const [act, busy, error] = useAction();
  const [form, setForm] = useState({ username: '', password: '', role: 'viewer' as Role });
  const create = (event: FormEvent) => {
    event.preventDefault();
    void act(() => unwrap(api.POST('/users', { body: form }))).then((ok) => {
      if (ok) setForm({ username: '', password: '', role: 'viewer' });
      users.reload();
    });
  };
  const patch = (userId: string, body: { role?: Role; isDisabled?: boolean }) => void act(() => unwrap(api.PATCH('/users/{userId}', { params: { path: { userId } }, body }))).then(users.reload);
  const remove = (userId: string, username: string) => {
    if (window.confirm(`Delete user ${username}?`)) void act(() => unwrap(api.DELETE('/users/{userId}', { params: { path: { userId } } }))).then(users.reload);
  };
  const newUser = (
    <form className="filters" onSubmit={create} aria-label="New user">
      <input aria-label="Username" placeholder="username" required value={form.username} onChange={(e) => setForm({ ...form, username: e.target.value })} />
      <input aria-label="Password" type="password" placeholder="password (8+)" minLength={8} required value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} />
      <RoleSelect label="Role" value={form.role} roles={ROLES} onChange={(role) => setForm({ ...form, role })} />
      <button type="submit" disabled={busy}>
        Add user
      </button>
    </form>
  );
  return (
    <ListPage
      title="Users"
      what="users"
      error={users.error ?? error}
      form={newUser}
      items={users.data?.users}
      columns={['User', 'Role', 'Sign-in', 'Created', 'State', 'Actions']}
      row={(u) => {
        const self = principal?.id === u.id;
        return (
          <tr key={u.id}>
            <th scope="row">{u.username}</th>
            <td>
              <RoleSelect label={`Role of ${u.username}`} value={u.role} roles={ROLES} disabled={busy} onChange={(role) => patch(u.id, { role })} />
            </td>
            <td>{u.authProvider}</td>
            <td>
              <Time value={u.createdAt} />
            </td>
            <td>{u.isDisabled ? 'disabled' : 'active'}</td>
            <td>
              <button type="button" disabled={busy || self} onClick={() => patch(u.id, { isDisabled: !u.isDisabled })}>
                {u.isDisabled ? 'Enable' : 'Disable'}
              </button>{' '}
              <button type="button" disabled={busy || self} onClick={() => remove(u.id, u.username)}>
                Delete
              </button>
            </td>
          </tr>
        );
      }}
    />
  );
}

export default function Users() {
  return (
    <AdminOnly>
      <UsersPage />
    </AdminOnly>
  );
}
