import { z } from 'zod';
import type { Dag, Step } from '../model/dag.js';
import type { Issues } from './issues.js';

/**
 * Where a step's commands run when not on the worker's own host: over SSH (`ssh:` at DAG level,
 * `type: ssh` config) or in a container (`container:` at DAG or step level, `type: docker`
 * config). One schema each, used when a definition is validated and again by the executor on
 * the expanded values, so both read the same fields. A `${...}` reference is taken on trust
 * here and checked after expansion.
 */

const REFERENCE = /\$\{[^}]*\}/;
const str = z.string({ error: 'must be a string' });
const nonEmpty = str.min(1, 'must not be empty');
const reference = (message: string): z.ZodType<string> => z.string().regex(REFERENCE, message);

/** true/false, or the text a `${VAR}` expands to. */
export const placementFlag = z.union([z.boolean(), z.enum(['true', 'false']), reference('must be true or false')], { error: 'must be true or false' });
const PORT_MESSAGE = 'must be a port number from 1 to 65535';
const port = z.union([z.number({ error: PORT_MESSAGE }).int(PORT_MESSAGE).min(1, PORT_MESSAGE).max(65535, PORT_MESSAGE), z.string().regex(/^\d{1,5}$/), reference(PORT_MESSAGE)], { error: PORT_MESSAGE });
const shellField = z.union([nonEmpty, z.array(nonEmpty).min(1, 'must not be empty')], { error: 'must be a string or a list of strings' });

export const sshConfigSchema = z.strictObject({
  user: nonEmpty.optional(),
  host: nonEmpty.optional(),
  port: port.optional(),
  key: nonEmpty.optional(),
  password: str.optional(),
  strict_host_key: placementFlag.optional(),
  known_host_file: nonEmpty.optional(),
  shell: shellField.optional(),
});
export type SshConfig = z.infer<typeof sshConfigSchema>;

const ENV_ITEM = /^[A-Za-z_][A-Za-z0-9_]*=/;
const scalar = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' });
const containerEnv = z.union([z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name'), scalar), z.array(z.string().regex(ENV_ITEM, 'must be KEY=value'))], {
  error: 'must be a mapping or a list of KEY=value',
});
const regex = str.refine((text) => {
  try {
    new RegExp(text);
    return true;
  } catch {
    return REFERENCE.test(text);
  }
}, 'must be a valid regular expression');

export const CONTAINER_STARTUPS = ['keepalive', 'entrypoint', 'command'] as const;

const execFields = {
  user: nonEmpty.optional(),
  working_dir: nonEmpty.optional(),
  env: containerEnv.optional(),
  shell: shellField.optional(),
};

const imageMode = z.strictObject({
  ...execFields,
  image: nonEmpty,
  name: nonEmpty.optional(),
  pull_policy: z.enum(['always', 'missing', 'never'], { error: 'must be always, missing or never' }).optional(),
  volumes: z.array(nonEmpty, { error: 'must be a list of host:container[:ro] strings' }).optional(),
  platform: nonEmpty.optional(),
  ports: z.array(z.union([nonEmpty, z.number().int()]), { error: 'must be a list of ports' }).optional(),
  network: nonEmpty.optional(),
  startup: z.enum(CONTAINER_STARTUPS, { error: 'must be keepalive, entrypoint or command' }).optional(),
  command: shellField.optional(),
  wait_for: z.enum(['running', 'healthy'], { error: 'must be running or healthy' }).optional(),
  log_pattern: regex.optional(),
  restart_policy: z.enum(['no', 'always', 'unless-stopped'], { error: 'must be no, always or unless-stopped' }).optional(),
  keep_container: placementFlag.optional(),
});

const execMode = z.strictObject({ ...execFields, exec: nonEmpty });

export type ImageContainerConfig = z.infer<typeof imageMode>;
export type ExecContainerConfig = z.infer<typeof execMode>;
export type ContainerConfig = ImageContainerConfig | ExecContainerConfig;

/**
 * Image mode (`image`: start a container) or exec mode (`exec`: a running container's name).
 * The mode is chosen by the key present, so an error names the field at fault.
 */
export function containerSchemaFor(raw: unknown): z.ZodType<ContainerConfig> {
  const exec = raw !== null && typeof raw === 'object' && 'exec' in raw && !('image' in raw);
  return exec ? execMode : imageMode;
}

/** `container: name` is the exec form of `{exec: name}`. */
export function containerConfigOf(value: string | Record<string, unknown>): Record<string, unknown> {
  return typeof value === 'string' ? { exec: value } : value;
}

/** Steps and handlers with the path their errors are named under. */
function stepsWithPaths(dag: Dag): Array<[Step, string]> {
  const handlers = Object.entries(dag.handlerOn).map(([kind, step]): [Step, string] => [step, `handler_on.${kind}`]);
  return [...handlers, ...dag.steps.map((step, i): [Step, string] => [step, `steps[${i}]`])];
}

/** The container a shell step runs in: its own, else the DAG's. */
export function containerOfStep(step: Step, dag: Pick<Dag, 'container'>): string | Record<string, unknown> | undefined {
  return step.type === 'shell' ? (step.container ?? dag.container) : undefined;
}

function checkPlacement(step: Step, path: string, dag: Dag, issues: Issues): void {
  if (step.container !== undefined && step.type !== 'shell') issues.add(`${path}.container`, `a step of type ${step.type} does not run commands in a container; remove container or the type`);
  const container = containerOfStep(step, dag);
  const overSsh = (step.type === 'shell' && container === undefined && dag.ssh !== undefined) || step.type === 'ssh';
  // A step-level container with a script is already refused where the step is read.
  if (step.script !== undefined && step.container === undefined && (overSsh || container !== undefined || step.type === 'docker')) {
    issues.add(`${path}.script`, `cannot run ${overSsh ? 'over SSH' : 'in a container'}; put the commands in command`);
  }
  if (step.type === 'ssh') {
    issues.check(sshConfigSchema, step.config, `${path}.config`);
    if (step.config.host === undefined && dag.ssh === undefined) issues.add(`${path}.config.host`, 'is required (or set a DAG-level ssh)');
  }
  if (step.type === 'docker') {
    if (Object.keys(step.config).length > 0) issues.check(containerSchemaFor(step.config), step.config, `${path}.config`);
    else if (dag.container === undefined) issues.add(`${path}.config`, 'is required: image (start a container) or exec (use a running one), or set a DAG-level container');
  }
  if ((step.type === 'ssh' || step.type === 'docker') && step.commands.length === 0 && step.script === undefined) {
    issues.add(`${path}.command`, 'is required: the commands to run there');
  }
}

/**
 * DAG-level `ssh` and `container`, step-level `container`, and the ssh and docker step types:
 * every step that asked to run somewhere else can be placed there, or the definition is invalid.
 */
export function checkPlacements(dag: Dag, issues: Issues): void {
  if (dag.ssh !== undefined && dag.ssh.host === undefined) issues.add('ssh.host', 'is required');
  for (const [step, path] of stepsWithPaths(dag)) checkPlacement(step, path, dag, issues);
}
