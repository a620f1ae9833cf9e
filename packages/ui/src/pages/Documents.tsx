import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNote, Loading, Page, Time, useAction } from '../components/common';
import { Markdown } from '../components/Markdown';
import { useAuth } from '../lib/auth';
import { useResource } from '../lib/use-resource';

type TreeNode = Schemas['DocTreeNode'];
type Doc = Schemas['Document'];

const docLink = (id: string) => `/docs?path=${encodeURIComponent(id)}`;

/** The documents' tree: directories as nested lists, files as links that open them. */
function Tree({ nodes, selected }: { nodes: TreeNode[]; selected: string | undefined }) {
  return (
    <ul className="doc-tree">
      {nodes.map((node) =>
        node.type === 'directory' ? (
          <li key={node.id}>
            <span className="muted">{node.name}/</span>
            <Tree nodes={node.children ?? []} selected={selected} />
          </li>
        ) : (
          <li key={node.id}>
            <Link to={docLink(node.id)} aria-current={node.id === selected ? 'page' : undefined}>
              {node.title ?? node.name}
            </Link>
          </li>
        ),
      )}
    </ul>
  );
}

/** A new document: its id (a path without `.md`) and its text. */
function NewDocument({ onCreated }: { onCreated: (id: string) => void }) {
  const [id, setId] = useState('');
  const [content, setContent] = useState('');
  const [act, busy, error] = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void act(() => unwrap(api.POST('/docs', { body: { id, content } }))).then((ok) => ok && onCreated(id));
  };
  return (
    <form onSubmit={submit} aria-label="New document" className="doc-form">
      <input aria-label="New document id" placeholder="folder/name" required maxLength={256} value={id} onChange={(e) => setId(e.target.value)} />
      <textarea aria-label="New document text" rows={6} required value={content} onChange={(e) => setContent(e.target.value)} />
      <button type="submit" disabled={busy}>
        Create document
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

/** One document: rendered or as its source; writers edit, rename and delete it. */
function DocumentView({ doc, onChanged, onGone }: { doc: Doc; onChanged: (id: string) => void; onGone: () => void }) {
  const { can } = useAuth();
  const [mode, setMode] = useState<'rendered' | 'source' | 'edit'>('rendered');
  const [draft, setDraft] = useState(doc.content);
  const [newPath, setNewPath] = useState(doc.id);
  const [act, busy, error] = useAction();
  const path = { query: { path: doc.id } };
  const save = (event: FormEvent) => {
    event.preventDefault();
    void act(() => unwrap(api.PATCH('/docs/doc', { params: path, body: { content: draft } }))).then((ok) => {
      if (!ok) return;
      setMode('rendered');
      onChanged(doc.id);
    });
  };
  const rename = (event: FormEvent) => {
    event.preventDefault();
    void act(() => unwrap(api.POST('/docs/doc/rename', { params: path, body: { newPath } }))).then((ok) => ok && onChanged(newPath));
  };
  const remove = () => {
    if (window.confirm(`Delete document ${doc.id}?`)) void act(() => unwrap(api.DELETE('/docs/doc', { params: path }))).then((ok) => ok && onGone());
  };
  const writer = can('write');
  return (
    <article aria-label={`Document ${doc.id}`}>
      <h2>{doc.title}</h2>
      <p className="muted">
        {doc.id} · updated <Time value={doc.updatedAt} />
      </p>
      <div className="filters">
        <button type="button" aria-pressed={mode === 'rendered'} onClick={() => setMode('rendered')}>
          Rendered
        </button>
        <button type="button" aria-pressed={mode === 'source'} onClick={() => setMode('source')}>
          Plain text
        </button>
        <button type="button" disabled={!writer} aria-pressed={mode === 'edit'} onClick={() => setMode('edit')}>
          Edit
        </button>
        <button type="button" disabled={!writer || busy} onClick={remove}>
          Delete
        </button>
      </div>
      <ErrorNote error={error} />
      {mode === 'rendered' ? <Markdown text={doc.content} /> : null}
      {mode === 'source' ? <pre data-testid="doc-source">{doc.content}</pre> : null}
      {mode === 'edit' ? (
        <form onSubmit={save} aria-label={`Edit ${doc.id}`} className="doc-form">
          <textarea aria-label="Document text" rows={16} value={draft} onChange={(e) => setDraft(e.target.value)} />
          <button type="submit" className="primary" disabled={busy}>
            Save document
          </button>
        </form>
      ) : null}
      {writer ? (
        <form onSubmit={rename} aria-label={`Rename ${doc.id}`} className="filters">
          <input aria-label="New path" required maxLength={256} value={newPath} onChange={(e) => setNewPath(e.target.value)} />
          <button type="submit" disabled={busy || newPath === doc.id}>
            Rename
          </button>
        </form>
      ) : null}
    </article>
  );
}

/** Markdown documents under the docs directory: the tree, one document, and (for writers) new ones. */
export default function Documents() {
  const [search, setSearch] = useSearchParams();
  const selected = search.get('path') ?? undefined;
  const { can } = useAuth();
  const tree = useResource(() => unwrap(api.GET('/docs', { params: { query: { perPage: 1000 } } })), []);
  const doc = useResource(() => (selected !== undefined ? unwrap(api.GET('/docs/doc', { params: { query: { path: selected } } })) : Promise.resolve(undefined)), [selected]);
  const open = (id: string | undefined) => {
    tree.reload();
    if (id === selected) doc.reload();
    setSearch(id !== undefined ? { path: id } : {});
  };
  const nodes = tree.data !== undefined && 'tree' in tree.data ? (tree.data.tree ?? []) : [];
  return (
    <Page title="Documents">
      <div className="doc-layout">
        <nav aria-label="Documents">
          <ErrorNote error={tree.error} />
          {tree.data === undefined ? <Loading what="documents" /> : nodes.length === 0 ? <p className="muted">No documents yet.</p> : <Tree nodes={nodes} selected={selected} />}
          {can('write') ? <NewDocument onCreated={open} /> : null}
        </nav>
        <div>
          {selected === undefined ? (
            <p className="muted">Choose a document.</p>
          ) : doc.data !== undefined ? (
            <DocumentView key={doc.data.id} doc={doc.data} onChanged={open} onGone={() => open(undefined)} />
          ) : doc.error !== undefined ? (
            <ErrorNote error={doc.error} />
          ) : (
            <Loading what="the document" />
          )}
        </div>
      </div>
    </Page>
  );
}
