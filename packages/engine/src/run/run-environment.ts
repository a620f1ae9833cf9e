import { isAbsolute, join, resolve } from 'node:path';
import { confinedPath, expandForShell, expandReferences, isReservedParamName, nameSegment, readJsonPath, type Step } from '@trellis/core';
import type { RunOptions } from '../types.js';
import { SecretMasker } from '../logs/secret-masker.js';
import { shellParsedTexts } from '../executors/shell.js';
import type { NodeState } from './node-state.js';
import { filterHostEnv, loadDotenv, resolveSecrets } from './environment.js';
import { conditionValue, type ConditionContext } from './conditions.js';
import { outputKey } from './outputs.js';

/**
 * What a run's steps see: its variables (env, params, outputs of earlier steps), the secrets it
 * masks, and `${...}` expansion against them.
 */
export class RunEnvironment {
  readonly vars = new Map<string, string>();
  masker = new SecretMasker([]);
  baseEnv: Record<string, string> = {};
  /** Positional params, passed to shell commands as $1, $2, ... */
  positional: string[] = [];

  constructor(
    private readonly options: RunOptions,
    private readonly workDir: string,
    private readonly runLogPath: string,
    /** Steps by name and id, for `${step.stdout}` and friends. */
    private readonly byRef: ReadonlyMap<string, NodeState>,
  ) {}

  async prepare(nodes: readonly NodeState[]): Promise<void> {
    const dag = this.options.dag;
    const host = this.options.hostEnv ?? process.env;
    const id = this.options.identity;
    const env: Record<string, string> = {
      ...filterHostEnv(host, this.options.envPassthrough, this.options.envPassthroughPrefixes),
      DAG_NAME: dag.name,
      DAG_RUN_ID: id.dagRunId,
      DAG_RUN_LOG_FILE: this.runLogPath,
      DAG_RUN_WORK_DIR: this.workDir,
    };
    if (this.options.docsDir !== undefined && this.options.docsDir !== '') env.DAG_DOCS_DIR = confinedPath(this.options.docsDir, nameSegment(dag.name));
    else delete env.DAG_DOCS_DIR;
    for (const [k, v] of Object.entries(env)) this.vars.set(k, v);
    // Set before anything here can fail: the handlers of a run that fails now still get this much.
    this.baseEnv = env;
    const secrets = { ...(await resolveSecrets(dag.secrets, host, this.options.baseDir ?? this.workDir)), ...(this.options.secrets ?? {}) };
    this.masker = new SecretMasker([...Object.values(secrets), ...(this.options.maskValues ?? [])]);
    if (this.masker.active) for (const node of nodes) node.maskPayload((text) => this.masker.mask(text));
    const dotenvDirs = [...(this.options.baseDir !== undefined ? [this.options.baseDir] : []), this.workingDirOf(undefined)];
    if (dag.dotenv.length > 0) this.setAll(env, await loadDotenv(dag.dotenv, dotenvDirs, this.options.dotenvFiles));
    for (const entry of dag.env) this.setVar(env, entry.key, this.expand(entry.value));
    const positional: string[] = [];
    this.refuseReservedParams();
    for (const param of this.options.params) {
      const value = param.evaluate === true ? await conditionValue(param.value, this.conditionContext(env)) : param.value;
      if (/^\d+$/.test(param.name)) positional.push(value);
      else this.setVar(env, param.name, value);
    }
    this.positional = positional;
    this.setAll(env, this.options.env ?? {});
    this.setAll(env, secrets);
    this.baseEnv = env;
  }

  /** A host that did not resolve params through resolveStartParams (CLI, tests) gets the same rule. */
  private refuseReservedParams(): void {
    const declared = new Set(this.options.dag.params.defs.map((d) => d.name));
    const reserved = this.options.params.filter((p) => !declared.has(p.name) && isReservedParamName(p.name)).map((p) => p.name);
    if (reserved.length > 0) throw new Error(`param ${reserved.join(', ')}: reserved variable name; only a param the DAG declares may set it`);
  }

  private setVar(env: Record<string, string>, key: string, value: string): void {
    env[key] = value;
    this.vars.set(key, value);
  }

  private setAll(env: Record<string, string>, values: Record<string, string>): void {
    for (const [k, v] of Object.entries(values)) this.setVar(env, k, v);
  }

  expand(text: string): string {
    return expandReferences(text, (head, path) => this.resolveRef(head, path));
  }

  /**
   * Text a shell parses: each resolved reference becomes a variable of `bound` the shell expands
   * as data, so a value is never run as code.
   */
  expandShellText(text: string, bound: Record<string, string>): string {
    return expandForShell(text, (head, path) => this.resolveRef(head, path), (value) => {
      const name = `TRELLIS_REF_${Object.keys(bound).length}`;
      bound[name] = value;
      return name;
    });
  }

  resolveRef(head: string, path: string[]): string | undefined {
    const node = path.length > 0 ? this.byRef.get(head) : undefined;
    if (node !== undefined) {
      const [field, key] = path;
      if (field === 'stdout' && path.length === 1) return node.stdoutPath;
      if (field === 'stderr' && path.length === 1) return node.stderrPath;
      if (field === 'exit_code' && path.length === 1) return node.exitCode !== undefined ? String(node.exitCode) : undefined;
      if (field === 'outputs' && key !== undefined && path.length === 2) return node.childOutputs[key] ?? node.childOutputs[outputKey(key)];
    }
    const value = this.vars.get(head);
    if (value === undefined || path.length === 0) return value;
    return readJsonPath(value, path);
  }

  /** The env a step sees: the run's, then everything later steps produced, then its own. */
  stepEnv(node: NodeState): Record<string, string> {
    const env: Record<string, string> = { ...this.baseEnv, ...Object.fromEntries(this.vars) };
    for (const entry of node.step.env) env[entry.key] = this.expand(entry.value);
    env.DAG_RUN_STEP_NAME = node.step.name;
    env.DAG_RUN_STEP_STDOUT_FILE = node.stdoutPath;
    env.DAG_RUN_STEP_STDERR_FILE = node.stderrPath;
    return env;
  }

  conditionContext(env: Record<string, string>): ConditionContext {
    return { env, cwd: this.workDir, expand: (text) => this.expand(text), expandForShell: (text, bound) => this.expandShellText(text, bound) };
  }

  /** A step's working directory; without a step, the run's (the DAG's `working_dir`, or the work directory). */
  workingDirOf(step: Step | undefined): string {
    const dir = step?.workingDir ?? this.options.dag.workingDir;
    if (dir === undefined) return this.workDir;
    const expanded = this.expand(dir);
    return isAbsolute(expanded) ? expanded : resolve(this.options.baseDir ?? this.workDir, expanded);
  }

  resolvePath(path: string): string {
    return isAbsolute(path) ? path : join(this.workDir, path);
  }

  /**
   * The step with `${...}` references in its fields expanded against what the run knows now; in
   * text a shell parses, references become the `bound` variables (see expandShellText).
   */
  expandStep(step: Step): { step: Step; bound: Record<string, string> } {
    const bound: Record<string, string> = {};
    const parsed = step.type === 'shell' ? shellParsedTexts(step, step.shell ?? this.options.dag.shell ?? ['sh']) : { commands: false, script: false };
    const expandText = (text: string, shellParsed: boolean): string => (shellParsed ? this.expandShellText(text, bound) : this.expand(text));
    const out: Step = {
      ...step,
      commands: step.commands.map((c) => expandText(c, parsed.commands)),
      env: step.env.map((e) => ({ key: e.key, value: this.expand(e.value) })),
      config: this.expandDeep(step.config) as Record<string, unknown>,
    };
    if (step.script !== undefined) out.script = expandText(step.script, parsed.script);
    return { step: out, bound };
  }

  private expandDeep(value: unknown): unknown {
    return this.expandDeepWith(value, (text) => this.expand(text));
  }

  expandDeepWith(value: unknown, expand: (text: string) => string): unknown {
    if (typeof value === 'string') return expand(value);
    if (Array.isArray(value)) return value.map((v) => this.expandDeepWith(v, expand));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.expandDeepWith(v, expand)]));
    return value;
  }
}
