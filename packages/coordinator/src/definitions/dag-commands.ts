import { isValidDagFileName, loadDag, RunStatus, AlreadyExistsError, BadRequestError, NotFoundError, toError } from '@trellis/core';
import { listRuns, setSuspended, type Db, deleteWebhook } from '@trellis/store';
import type { RunService } from '../runs/run-service.js';
import type { StoredKindCache } from '../stored-files/stored-kind-cache.js';
import type { DagIndex } from './dag-index.js';
import { requireDag, type DagSchedule } from './dag-lookup.js';
import { recordAudit } from '../auth/audit.js';
import type { Actor } from '../auth/principal.js';
import { auditRun } from '../runs/run-audit.js';

export interface DagCommandDeps {
  db: Db;
  /** The stored definitions (the database). */
  dags: StoredKindCache;
  index: DagIndex;
  runs: RunService;
  schedule: DagSchedule;
  /** Refuses definition changes while they would diverge from the repository (sync's read-only mode). */
  requireWritable(): Promise<void>;
}

/** The DAG created without a spec: one step that echoes. */
const MINIMAL_SPEC = 'steps:\n  - name: step1\n    command: echo hello\n';

/** The statuses stop-all ends: running, queued and waiting (for approval). */
const STOPPABLE = [RunStatus.Running, RunStatus.Queued, RunStatus.Waiting] as const;

/** How many runs stop-all reads at a time. */
const STOP_PAGE = 500;

/**
 * Changing DAG definitions (stored in the database, mirrored by the index and the DAGs directory) and their suspension.
 * Every change is recorded in the audit trail with its actor.
 */
export class DagCommands {
  constructor(private readonly deps: DagCommandDeps) {}

  /** Stores a new definition (a minimal one-step DAG without a spec); refuses an invalid spec or a taken name. */
  async create(actor: Actor, name: string, spec = MINIMAL_SPEC): Promise<{ name: string }> {
    if (!isValidDagFileName(name)) throw new BadRequestError('Invalid DAG name format', { name });
    const { errors } = loadDag(spec, { fileName: name });
    if (errors.length > 0) throw new BadRequestError(`invalid spec: ${errors.join('; ')}`, { errors });
    await this.deps.requireWritable();
    if ((await this.deps.dags.create(name, spec, actor.name)) === undefined) throw new AlreadyExistsError('DAG already exists', { name });
    await this.audit(actor, 'dag.created', name, `created DAG ${name}`);
    return { name };
  }

  /** Replaces a definition's YAML; an invalid spec is not stored and its problems are returned. */
  async updateSpec(actor: Actor, fileName: string, spec: string): Promise<{ errors: string[] }> {
    await this.deps.index.current();
    requireDag(this.deps.index, fileName);
    const { errors } = this.deps.index.parse(spec, fileName);
    if (errors.length > 0) return { errors };
    await this.deps.requireWritable();
    if ((await this.deps.dags.update(fileName, spec, actor.name)) === undefined) throw new NotFoundError('DAG not found', { fileName });
    await this.audit(actor, 'dag.updated', fileName, `updated the spec of DAG ${fileName}`);
    return { errors: [] };
  }

  /** Moves a definition to a free file name in one transaction, so two coordinators never both take a name. */
  async rename(actor: Actor, fileName: string, newFileName: string): Promise<{ fileName: string }> {
    if (!isValidDagFileName(newFileName)) throw new BadRequestError('Invalid new file name format', { newFileName });
    await this.deps.requireWritable();
    const outcome = await this.deps.dags.rename(fileName, newFileName, actor.name);
    if (!outcome.renamed && outcome.reason === 'missing') throw new NotFoundError('DAG not found', { fileName });
    if (!outcome.renamed) throw new AlreadyExistsError('a DAG with that file name already exists', { newFileName });
    await this.audit(actor, 'dag.renamed', fileName, `renamed DAG ${fileName} to ${newFileName}`, { newFileName });
    await this.retireWebhook(actor, fileName);
    return { fileName: newFileName };
  }

  async remove(actor: Actor, fileName: string): Promise<void> {
    await this.deps.requireWritable();
    if ((await this.deps.dags.delete(fileName, actor.name)) === undefined) throw new NotFoundError('DAG not found', { fileName });
    await this.audit(actor, 'dag.deleted', fileName, `deleted DAG ${fileName}`);
    await this.retireWebhook(actor, fileName);
  }

  /**
   * A webhook belongs to the DAG it was made for: when that file goes (deleted, renamed), its
   * token must not start whatever DAG takes the name next.
   */
  private async retireWebhook(actor: Actor, fileName: string): Promise<void> {
    const hook = await deleteWebhook(this.deps.db, fileName);
    if (hook !== undefined) await this.audit(actor, 'webhook.deleted', fileName, `removed the webhook of DAG ${fileName} with its DAG`, { webhookId: hook.id });
  }

  /** A suspended DAG is not scheduled; manual runs still work. */
  async suspend(actor: Actor, fileName: string, suspended: boolean): Promise<{ suspended: boolean }> {
    const entry = requireDag(this.deps.index, fileName);
    await setSuspended(this.deps.db, entry.name, suspended);
    this.deps.schedule.setSuspended(entry.name, suspended);
    await this.audit(actor, suspended ? 'dag.suspended' : 'dag.resumed', fileName, `${suspended ? 'suspended' : 'resumed'} DAG ${fileName}`);
    return { suspended };
  }

  /** Stops every running, waiting or queued run of a DAG; a run that cannot be stopped is named in the errors, not thrown. */
  async stopAllRuns(actor: Actor, fileName: string): Promise<{ errors: string[] }> {
    const entry = requireDag(this.deps.index, fileName);
    const errors: string[] = [];
    for (const status of STOPPABLE) {
      let cursor: string | undefined;
      do {
        const page = await listRuns(this.deps.db, { name: entry.name, status, limit: STOP_PAGE, ...(cursor !== undefined ? { cursor } : {}) });
        for (const run of page.runs) {
          await this.deps.runs.stop(run).then(
            () => auditRun(this.deps.db, actor, 'run.stopped', run, { stopAll: true }),
            (error: unknown) => errors.push(`${run.dagRunId}: ${toError(error).message}`),
          );
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    }
    return { errors };
  }

  private audit(actor: Actor, type: string, fileName: string, message: string, data: Record<string, unknown> = {}): Promise<void> {
    return recordAudit(this.deps.db, actor, { type, message, dagName: fileName, data: { fileName, ...data } });
  }
}
