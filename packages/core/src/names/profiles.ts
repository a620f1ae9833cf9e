/**
 * Names of the runtime-profile and workspace world (interface.md, "Runtime profile"), shared by
 * the coordinator's edges and the CLI.
 */

/** Lowercase slug: starts with a lowercase letter or digit, then lowercase letters, digits, `.`, `_`, `-`. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9._-]*$/;
/** Longer names are refused: they name an environment, not a sentence. */
export const MAX_PROFILE_NAME_LENGTH = 128;
/** An environment variable key: a letter or underscore, then letters, digits, underscores. */
export const PROFILE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Keys the service sets itself at run time; a profile may not shadow them. */
export const RESERVED_KEY_PREFIX = 'SVC_';
export const MAX_PROFILE_KEY_LENGTH = 255;

/**
 * A workspace name follows the profile name rule: it is also a label value, a comma-separated
 * filter value and a path segment (`/profiles/_workspaces/{name}`), so no `,`, `/`, `=` or spaces.
 */
export const WORKSPACE_NAME = PROFILE_NAME;
export const MAX_WORKSPACE_NAME_LENGTH = 100;

/** The problem with a workspace name, or undefined when valid. */
export function workspaceNameProblem(name: string): string | undefined {
  if (name.length > MAX_WORKSPACE_NAME_LENGTH) return `a workspace name is at most ${MAX_WORKSPACE_NAME_LENGTH} characters`;
  if (!WORKSPACE_NAME.test(name)) return 'a workspace name is a lowercase slug: a lowercase letter or digit, then lowercase letters, digits, ".", "_", "-"';
  return undefined;
}

/** The label that puts a DAG in a workspace. */
export const WORKSPACE_LABEL_KEY = 'workspace';

export function workspaceLabel(workspaceName: string): string {
  return `${WORKSPACE_LABEL_KEY}=${workspaceName}`;
}

/** The workspace a DAG's labels name, if any (the first `workspace=<name>` label). */
export function workspaceOfLabels(labels: readonly string[]): string | undefined {
  const prefix = `${WORKSPACE_LABEL_KEY}=`;
  const label = labels.find((l) => l.startsWith(prefix) && l.length > prefix.length);
  return label?.slice(prefix.length);
}

/** The problem with a profile entry key, or undefined when valid. */
export function profileKeyProblem(key: string): string | undefined {
  if (key.length > MAX_PROFILE_KEY_LENGTH) return `key must be at most ${MAX_PROFILE_KEY_LENGTH} characters`;
  if (!PROFILE_KEY.test(key)) return 'key must start with a letter or underscore, then letters, digits and underscores';
  if (key.startsWith(RESERVED_KEY_PREFIX)) return `keys starting with ${RESERVED_KEY_PREFIX} are reserved for the service`;
  return undefined;
}
