import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { layerPath } from '../api/profile-layers';
import { ErrorNote, Loading, Page, Time, useAction } from '../components/common';
import { useAuth } from '../lib/auth';
import { useResource } from '../lib/use-resource';

type Workspace = Schemas['Workspace'];

/** Name and description of a new workspace, or of one being edited. */
function WorkspaceForm({ label, initial, submitText, onSubmit, onCancel }: { label: string; initial: { name: string; description: string }; submitText: string; onSubmit: (value: { name: string; description: string }) => Promise<boolean>; onCancel?: () => void }) {
  const [value, setValue] = useState(initial);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void onSubmit(value).then((ok) => ok && onCancel === undefined && setValue({ name: '', description: '' }));
  };
  return (
    <form className="filters" onSubmit={submit} aria-label={label}>
      <input aria-label="Workspace name" placeholder="name" required maxLength={100} value={value.name} onChange={(e) => setValue({ ...value, name: e.target.value })} />
      <input aria-label="Workspace description" placeholder="description" maxLength={500} value={value.description} onChange={(e) => setValue({ ...value, description: e.target.value })} />
      <button type="submit">{submitText}</button>
      {onCancel !== undefined ? (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </form>
  );
}

/** Workspaces: DAGs join one with the label `workspace=<name>`; its defaults apply to their runs. */
export default function Workspaces() {
  const workspaces = useResource(() => unwrap(api.GET('/workspaces')), []);
  const { can } = useAuth();
  const [act, busy, error] = useAction();
  const [editing, setEditing] = useState<string | undefined>();
  const create = (value: { name: string; description: string }) =>
    act(() => unwrap(api.POST('/workspaces', { body: { name: value.name, ...(value.description !== '' ? { description: value.description } : {}) } }))).then((ok) => {
      workspaces.reload();
      return ok;
    });
  const update = (w: Workspace, value: { name: string; description: string }) =>
    act(() => unwrap(api.PATCH('/workspaces/{workspaceId}', { params: { path: { workspaceId: w.id } }, body: value }))).then((ok) => {
      if (ok) setEditing(undefined);
      workspaces.reload();
      return ok;
    });
  const remove = (w: Workspace) => {
    if (window.confirm(`Delete workspace ${w.name} and its defaults? Its DAGs keep their label.`)) void act(() => unwrap(api.DELETE('/workspaces/{workspaceId}', { params: { path: { workspaceId: w.id } } }))).then(workspaces.reload);
  };
  return (
    <Page title="Workspaces">
      <p className="muted">
        A DAG belongs to a workspace through its label <code>workspace=&lt;name&gt;</code>; the workspace&apos;s defaults apply to its runs after the Global defaults.
      </p>
      {can('write') ? <WorkspaceForm label="New workspace" initial={{ name: '', description: '' }} submitText="Create workspace" onSubmit={create} /> : null}
      <ErrorNote error={workspaces.error ?? error} />
      {workspaces.data === undefined ? (
        <Loading what="workspaces" />
      ) : workspaces.data.workspaces.length === 0 ? (
        <p className="muted">No workspaces yet.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Workspaces</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {workspaces.data.workspaces.map((w) =>
              editing === w.id ? (
                <tr key={w.id}>
                  <td colSpan={5}>
                    <WorkspaceForm label={`Edit workspace ${w.name}`} initial={{ name: w.name, description: w.description ?? '' }} submitText="Save" onSubmit={(value) => update(w, value)} onCancel={() => setEditing(undefined)} />
                  </td>
                </tr>
              ) : (
                <tr key={w.id}>
                  <th scope="row">{w.name}</th>
                  <td>{w.description}</td>
                  <td>
                    <Time value={w.createdAt} />
                  </td>
                  <td>
                    <Time value={w.updatedAt} />
                  </td>
                  <td>
                    {can('run') ? <Link to={layerPath({ scope: 'workspace', workspace: w.name })}>Defaults</Link> : null}{' '}
                    {can('write') ? (
                      <>
                        <button type="button" disabled={busy} onClick={() => setEditing(w.id)} aria-label={`Edit ${w.name}`}>
                          Edit
                        </button>{' '}
                        <button type="button" disabled={busy} onClick={() => remove(w)} aria-label={`Delete ${w.name}`}>
                          Delete
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      )}
    </Page>
  );
}
