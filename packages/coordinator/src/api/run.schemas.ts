/** Response schemas of the run endpoints: run summaries and details, nodes, log pages, outputs. */
import { z } from 'zod';
import { stepSchema } from './step.schemas.js';

const status = z.number().int().describe('0 not started, 1 running, 2 failed, 3 aborted, 4 success, 5 queued, 6 partial success, 7 waiting, 8 rejected');
const stamp = z.string().describe('RFC 3339, or the empty string when unset');

export const queuedConditionSchema = z
  .object({
    type: z.literal('Queued'),
    status: z.enum(['True', 'False', 'Unknown']),
    reason: z.string().describe('QueueConcurrencyLimitReached, DispatchAdmissionPending, WorkerSelectorNotMatched, NoAvailableWorker or DispatchUnavailable'),
    message: z.string(),
    checkedAt: z.string(),
  })
  .meta({ id: 'QueuedCondition' });

export const triggeredBySchema = z
  .object({
    kind: z.enum(['user', 'apiKey', 'webhook', 'scheduler', 'anonymous']).describe('anonymous: started while auth was off'),
    id: z.string().describe('User id, API key id or webhook id; `scheduler` or `anonymous` for those kinds'),
    name: z.string().describe("Username, API key name, or the webhook's DAG name"),
  })
  .describe('Who started the run (a sub-run: who started its root); after a retry, who retried it')
  .meta({ id: 'TriggeredBy' });

export const runProfileEntrySchema = z
  .object({
    key: z.string(),
    kind: z.enum(['variable', 'secret']),
    layer: z.enum(['global', 'workspace', 'profile']).describe("Where the entry's value came from: Global defaults, the DAG's workspace defaults, or the selected profile"),
  })
  .describe('One runtime-profile entry the run resolved: never its value')
  .meta({ id: 'RunProfileEntry' });

const runSummaryFields = {
  rootDAGRunName: z.string(),
  rootDAGRunId: z.string(),
  parentDAGRunName: z.string(),
  parentDAGRunId: z.string(),
  dagRunId: z.string(),
  name: z.string(),
  status,
  statusLabel: z.string(),
  queuedAt: stamp,
  startedAt: stamp,
  finishedAt: stamp,
  log: z.string(),
  params: z.string().describe('JSON of the resolved parameters'),
  triggeredBy: triggeredBySchema,
  conditions: z.array(queuedConditionSchema).optional().describe('Why a queued run waits; only while queued'),
};

/** What only a run's own page shows: not repeated in every item of a run list. */
const runDetailFields = {
  error: z.string(),
  attemptId: z.string(),
  fileName: z.string().describe('The file of the stored DAG the run was started from, as it was named then; empty for an inline run'),
  profileName: z.string().describe('The runtime profile the run uses (sub-runs and retries keep it); empty when none'),
  profileEntries: z.array(runProfileEntrySchema).describe("The effective entries of the run's latest attempt (re-resolved at each attempt): keys, kinds and layers"),
};

export const runSummarySchema = z.object(runSummaryFields).meta({ id: 'DagRunSummary' });

const subRunSchema = z
  .object({ dagRunId: z.string(), name: z.string(), params: z.string(), status, statusLabel: z.string() })
  .meta({ id: 'SubRun' });

export const nodeSchema = z
  .object({
    step: stepSchema,
    stdout: z.string().describe('Path of the step stdout file'),
    stderr: z.string().describe('Path of the step stderr file'),
    startedAt: stamp,
    finishedAt: stamp,
    status: z.number().int().describe('0 not started, 1 running, 2 failed, 3 cancelled, 4 success, 5 skipped'),
    statusLabel: z.string(),
    retryCount: z.number().int(),
    doneCount: z.number().int(),
    subRuns: z.array(subRunSchema),
    subRunsRepeated: z.array(subRunSchema),
    error: z.string(),
  })
  .meta({ id: 'Node' });

export const runDetailsSchema = z
  .object({
    ...runSummaryFields,
    ...runDetailFields,
    nodes: z.array(nodeSchema),
    handlers: z.record(z.string(), nodeSchema).describe('Handler nodes by kind (init, success, failure, abort, wait, exit) once they ran'),
    gitCommit: z.string().describe('The repository commit the definition this run executes came from, when repository sync brought or published that exact text; empty otherwise'),
  })
  .meta({ id: 'DagRunDetails' });

export type RunSummary = z.output<typeof runSummarySchema>;
export type RunDetails = z.output<typeof runDetailsSchema>;

export const runListSchema = z.object({
  dagRuns: z.array(runSummarySchema),
  nextCursor: z.string().optional().describe('Present only when older runs exist'),
});

export const runDetailsResponseSchema = z.object({ dagRun: runDetailsSchema });

export const dagRunIdSchema = z.object({ dagRunId: z.string() });

/** How many lines of a log to read (the contract's `head`, `tail` and `limit`): 1-10000. */
export const logLinesQuery = z.coerce.number().int().min(1, 'must be 1-10000').max(10000, 'must be 1-10000');

export const logPageSchema = z
  .object({ content: z.string(), lineCount: z.number().int(), totalLines: z.number().int(), hasMore: z.boolean(), isEstimate: z.boolean() })
  .meta({ id: 'LogPage' });

export const runOutputsSchema = z
  .object({
    metadata: z.object({ dagName: z.string(), dagRunId: z.string(), attemptId: z.string(), status: z.string(), completedAt: z.string(), params: z.string() }),
    outputs: z.record(z.string(), z.string()),
  })
  .meta({ id: 'RunOutputs' });

/** The body of a 408 from start-sync: the error body plus the run that goes on. */
export const startSyncTimeoutSchema = z.object({ code: z.literal('timeout'), message: z.string(), dagRunId: z.string(), details: z.record(z.string(), z.unknown()).optional() });

/** The answer of actions that have nothing to report. */
export const emptyBody = z.object({});
