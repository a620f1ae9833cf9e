import type { DocumentSummary } from './document-store.js';

/** A node of the documents tree: a directory (a prefix of ids) or a document. */
export type DocTreeNode =
  | { id: string; name: string; type: 'directory'; children: DocTreeNode[] }
  | { id: string; name: string; type: 'file'; title: string };

interface Folder {
  folders: Map<string, Folder>;
  files: DocumentSummary[];
}

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function nodesOf(folder: Folder, prefix: string): DocTreeNode[] {
  const directories: DocTreeNode[] = [...folder.folders].map(([name, child]) => ({ id: prefix + name, name, type: 'directory', children: nodesOf(child, `${prefix}${name}/`) }));
  const files: DocTreeNode[] = folder.files.map(({ id, title }) => ({ id, name: id.slice(prefix.length), type: 'file', title }));
  return [...directories.sort(byName), ...files.sort(byName)];
}

/** The documents as a tree of their id segments; at each level directories first, then documents, each by name. */
export function documentTree(documents: DocumentSummary[]): DocTreeNode[] {
  const root: Folder = { folders: new Map(), files: [] };
  for (const document of documents) {
    const segments = document.id.split('/');
    let folder = root;
    for (const segment of segments.slice(0, -1)) {
      let next = folder.folders.get(segment);
      if (next === undefined) folder.folders.set(segment, (next = { folders: new Map(), files: [] }));
      folder = next;
    }
    folder.files.push(document);
  }
  return nodesOf(root, '');
}
