import * as fs from 'node:fs';
import { mkdirSync } from 'node:fs';
import type Git from 'isomorphic-git';
import type { TreeEntry } from 'isomorphic-git';
import type Http from 'isomorphic-git/http/node';
import { toError } from '@trellis/core';

/** Where and how to reach the repository. */
export interface RemoteAccess {
  url: string;
  branch: string;
  /** An access token, sent as HTTP basic credentials (`x-access-token:<token>`, what GitHub, GitLab and Gitea accept). */
  token: string | undefined;
}

export interface RemoteCommitInfo {
  oid: string;
  author: string;
  message: string;
}

/** A file change of a commit: its content, or null to remove it. */
export type FileChanges = Map<string, string | null>;

/** The repository could not be reached, or refused us: said in words an operator can act on. */
export class RemoteError extends Error {}

const REMOTE = 'origin';

interface GitModules {
  git: typeof Git;
  http: typeof Http;
}

let gitModules: Promise<GitModules> | undefined;

/**
 * isomorphic-git and its HTTP client, loaded with the first call that needs them: 1.2 MB of
 * source held as a string, and pako besides, that a coordinator without sync need not hold.
 */
function loadGit(): Promise<GitModules> {
  gitModules ??= Promise.all([import('isomorphic-git'), import('isomorphic-git/http/node')]).then(([git, http]) => ({ git: git.default, http: http.default }));
  return gitModules;
}

/** The repository's host as messages name it: never the path's credentials or the token. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured URL';
  }
}

/** A cause's text without anything secret: the token, and credentials written into the URL. */
function redacted(text: string, access: RemoteAccess): string {
  let out = text.replace(/\/\/[^/@\s]+@/g, '//');
  if (access.token !== undefined && access.token !== '') out = out.split(access.token).join('***');
  return out;
}

function describe(error: unknown, access: RemoteAccess): RemoteError {
  const cause = toError(error);
  const host = hostOf(access.url);
  const status = (cause as { data?: { statusCode?: number } }).data?.statusCode;
  if (status === 401 || status === 403) return new RemoteError(`the repository at ${host} refused the credentials (HTTP ${status}): check auth.token`, { cause });
  if (status === 404) return new RemoteError(`the repository was not found at ${host} (HTTP 404): check the repository URL`, { cause });
  if ((cause as { code?: string }).code === 'NotFoundError') return new RemoteError(`the repository at ${host} has no such branch or path: ${redacted(cause.message, access)}`, { cause });
  return new RemoteError(`the repository at ${host} could not be reached: ${redacted(cause.message, access)}`, { cause });
}

/**
 * The repository, through a bare clone in the coordinator's data directory: a cache only (the
 * sync state lives in the database), so deleting it costs one full fetch. Smart HTTP only, as
 * isomorphic-git supports. Commits are built from trees, without a working copy.
 */
export class GitRemote {
  /** isomorphic-git's parsed pack files, kept between calls: without it every object read parses the pack index again. */
  private cache: object = {};

  constructor(private readonly gitdir: string) {}

  private headers(access: RemoteAccess): Record<string, string> {
    if (access.token === undefined) return {};
    return { Authorization: `Basic ${Buffer.from(`x-access-token:${access.token}`).toString('base64')}` };
  }

  private async prepare(access: RemoteAccess): Promise<void> {
    const { git } = await loadGit();
    mkdirSync(this.gitdir, { recursive: true });
    await git.init({ fs, gitdir: this.gitdir, bare: true, defaultBranch: access.branch });
    await git.addRemote({ fs, gitdir: this.gitdir, remote: REMOTE, url: access.url, force: true });
  }

  /** Whether the branch can be read with these credentials; throws a RemoteError saying why not. */
  async probe(access: RemoteAccess): Promise<void> {
    const { git, http } = await loadGit();
    try {
      const info = await git.getRemoteInfo({ http, url: access.url, headers: this.headers(access) });
      const heads = (info.refs as { heads?: Record<string, string> } | undefined)?.heads;
      if (heads?.[access.branch] === undefined) throw new RemoteError(`the repository at ${hostOf(access.url)} has no branch ${access.branch}`);
    } catch (error) {
      throw error instanceof RemoteError ? error : describe(error, access);
    }
  }

  /** Fetches the branch; the head commit. Nothing local changes unless the whole fetch succeeded. */
  async fetch(access: RemoteAccess): Promise<string> {
    const { git, http } = await loadGit();
    try {
      await this.prepare(access);
      // A fetch may bring a new pack: the parsed ones are read afresh.
      this.cache = {};
      const result = await git.fetch({ fs, http, gitdir: this.gitdir, cache: this.cache, remote: REMOTE, ref: access.branch, singleBranch: true, tags: false, headers: this.headers(access) });
      if (result.fetchHead === null) throw new RemoteError(`the repository at ${hostOf(access.url)} has no branch ${access.branch}`);
      return result.fetchHead;
    } catch (error) {
      throw error instanceof RemoteError ? error : describe(error, access);
    }
  }

  /** Every file under `root` at a commit, by its path relative to `root`. */
  async files(commit: string, root: string): Promise<Map<string, string>> {
    const { git } = await loadGit();
    const files = new Map<string, string>();
    let tree: string;
    try {
      tree = (await git.readTree({ fs, gitdir: this.gitdir, cache: this.cache, oid: commit, ...(root !== '' ? { filepath: root } : {}) })).oid;
    } catch (error) {
      if ((error as { code?: string }).code === 'NotFoundError') return files;
      throw error;
    }
    await this.collect(tree, '', files);
    return files;
  }

  private async collect(treeOid: string, prefix: string, into: Map<string, string>): Promise<void> {
    const { git } = await loadGit();
    const { tree } = await git.readTree({ fs, gitdir: this.gitdir, cache: this.cache, oid: treeOid });
    for (const entry of tree) {
      const path = `${prefix}${entry.path}`;
      if (entry.type === 'tree') await this.collect(entry.oid, `${path}/`, into);
      else if (entry.type === 'blob') into.set(path, Buffer.from((await git.readBlob({ fs, gitdir: this.gitdir, cache: this.cache, oid: entry.oid })).blob).toString('utf8'));
    }
  }

  /** A file at a commit (path from the repository root); undefined when the commit does not have it. */
  async fileAt(commit: string, filepath: string, cache: object = this.cache): Promise<string | undefined> {
    const { git } = await loadGit();
    try {
      return Buffer.from((await git.readBlob({ fs, gitdir: this.gitdir, cache, oid: commit, filepath })).blob).toString('utf8');
    } catch (error) {
      if ((error as { code?: string }).code === 'NotFoundError') return undefined;
      throw error;
    }
  }

  /**
   * A file as the branch was at this clone's last fetch, read with a cache of its own: it may run
   * while a fetch writes into the clone (a half-written pack index then fails this read, and
   * is not kept for later ones). Throws when the clone has not fetched the branch.
   */
  async fetchedFile(branch: string, filepath: string): Promise<string | undefined> {
    const { git } = await loadGit();
    const cache = {};
    const head = await git.resolveRef({ fs, gitdir: this.gitdir, ref: `refs/remotes/${REMOTE}/${branch}` });
    return this.fileAt(head, filepath, cache);
  }

  /** The newest commit at or before `head` that touched `filepath`, else `head` itself. */
  async lastChange(head: string, filepath: string): Promise<RemoteCommitInfo> {
    const { git } = await loadGit();
    let entry;
    try {
      [entry] = await git.log({ fs, gitdir: this.gitdir, cache: this.cache, ref: head, filepath, depth: 1 });
    } catch {
      // a path the history cannot follow: the head commit stands for it
    }
    entry ??= (await git.log({ fs, gitdir: this.gitdir, cache: this.cache, ref: head, depth: 1 }))[0];
    if (entry === undefined) return { oid: head, author: '', message: '' };
    return { oid: entry.oid, author: `${entry.commit.author.name} <${entry.commit.author.email}>`, message: entry.commit.message.trim() };
  }

  /**
   * One commit on top of `parent` with the changes (paths from the repository root), pushed as
   * a fast-forward of the branch; the new commit. A push refused because the branch moved is a
   * RemoteError: nothing was changed there.
   */
  async commitAndPush(access: RemoteAccess, parent: string, changes: FileChanges, message: string, author: { name: string; email: string }): Promise<string> {
    const { git, http } = await loadGit();
    const { tree: rootTree } = await git.readCommit({ fs, gitdir: this.gitdir, cache: this.cache, oid: parent }).then((c) => c.commit);
    const tree = (await this.changedTree(rootTree, changes)) ?? (await git.writeTree({ fs, gitdir: this.gitdir, tree: [] }));
    const oid = await git.commit({ fs, gitdir: this.gitdir, cache: this.cache, message, author, tree, parent: [parent], noUpdateBranch: true });
    await git.writeRef({ fs, gitdir: this.gitdir, ref: `refs/heads/${access.branch}`, value: oid, force: true });
    try {
      const result = await git.push({ fs, http, gitdir: this.gitdir, cache: this.cache, remote: REMOTE, ref: access.branch, remoteRef: access.branch, headers: this.headers(access) });
      if (!result.ok) throw new RemoteError(`the repository at ${hostOf(access.url)} refused the push: ${result.error ?? 'unknown reason'}`);
    } catch (error) {
      throw error instanceof RemoteError ? error : describe(error, access);
    }
    return oid;
  }

  /** The tree with the changes applied; undefined when it ends up empty (git keeps no empty directories). */
  private async changedTree(treeOid: string | undefined, changes: FileChanges): Promise<string | undefined> {
    const { git } = await loadGit();
    const entries = new Map<string, TreeEntry>();
    if (treeOid !== undefined) for (const entry of (await git.readTree({ fs, gitdir: this.gitdir, cache: this.cache, oid: treeOid })).tree) entries.set(entry.path, entry);
    const below = new Map<string, FileChanges>();
    for (const [path, content] of changes) {
      const slash = path.indexOf('/');
      if (slash >= 0) {
        const dir = path.slice(0, slash);
        if (!below.has(dir)) below.set(dir, new Map());
        below.get(dir)?.set(path.slice(slash + 1), content);
      } else if (content === null) {
        entries.delete(path);
      } else {
        const oid = await git.writeBlob({ fs, gitdir: this.gitdir, blob: Buffer.from(content, 'utf8') });
        entries.set(path, { mode: '100644', path, oid, type: 'blob' });
      }
    }
    for (const [dir, sub] of below) {
      const existing = entries.get(dir);
      const oid = await this.changedTree(existing?.type === 'tree' ? existing.oid : undefined, sub);
      if (oid === undefined) entries.delete(dir);
      else entries.set(dir, { mode: '040000', path: dir, oid, type: 'tree' });
    }
    if (entries.size === 0) return undefined;
    return git.writeTree({ fs, gitdir: this.gitdir, tree: [...entries.values()] });
  }
}
