import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { AdminOnly } from '../components/RoleGates';
import { SecretOnce, Time, useAction } from '../components/common';
import { ListPage } from '../components/ListPage';
import { useResource } from '../lib/use-resource';

function WebhooksPage() {
  const hooks = useResource(() => unwrap(api.GET('/webhooks')), []);
  const [act, busy, error] = useAction();
  const [fileName, setFileName] = useState('');
  const [token, setToken] = useState<string | undefined>();
  const create = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const created = await unwrap(api.POST('/dags/{fileName}/webhook', { params: { path: { fileName } }, body: {} }));
      setToken(created.token);
      setFileName('');
    }).then(hooks.reload);
  };
  const path = (dag: string) => ({ params: { path: { fileName: dag } } });
  const newHook = (
    <>
      <form className="filters" onSubmit={create} aria-label="New webhook">
        <input aria-label="DAG file name" placeholder="DAG file name" required pattern="[a-zA-Z0-9_-]+" value={fileName} onChange={(e) => setFileName(e.target.value)} />
        <button type="submit" disabled={busy}>
          Create webhook
        </button>
      </form>
      <SecretOnce what="token" value={token} />
    </>
  );
  return (
    <ListPage
      title="Webhooks"
      what="webhooks"
      error={hooks.error ?? error}
      form={newHook}
      items={hooks.data?.webhooks}
      columns={['DAG', 'Token prefix', 'State', 'Last used', 'Actions']}
      row={(h) => (
        <tr key={h.id}>
          <th scope="row">{h.dagName}</th>
          <td>
            <code>{h.tokenPrefix}…</code>
          </td>
          <td>{h.enabled ? 'enabled' : 'disabled'}</td>
          <td>
            <Time value={h.lastUsedAt} empty="never" />
          </td>
          <td>
            <button type="button" disabled={busy} onClick={() => void act(() => unwrap(api.POST('/dags/{fileName}/webhook/toggle', { ...path(h.dagName), body: { enabled: !h.enabled } }))).then(hooks.reload)}>
              {h.enabled ? 'Disable' : 'Enable'}
            </button>{' '}
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                void act(async () => {
                  const again = await unwrap(api.POST('/dags/{fileName}/webhook/regenerate', path(h.dagName)));
                  setToken(again.token);
                }).then(hooks.reload)
              }
            >
              New token
            </button>{' '}
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                if (window.confirm(`Delete the webhook of ${h.dagName}?`)) void act(() => unwrap(api.DELETE('/dags/{fileName}/webhook', path(h.dagName)))).then(hooks.reload);
              }}
            >
              Delete
            </button>
          </td>
        </tr>
      )}
    />
  );
}

export default function Webhooks() {
  return (
    <AdminOnly>
      <WebhooksPage />
    </AdminOnly>
  );
}
