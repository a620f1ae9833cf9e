/**
 * Response schemas of the DAG definition endpoints: the OpenAPI document's components for the
 * payloads that `@trellis/core`'s detail module builds.
 */
import { z } from 'zod';
import { paginationSchema } from './pagination.js';
import { runSummarySchema } from './run.schemas.js';
import { preconditionSchema, stepSchema } from './step.schemas.js';

const scheduleItemSchema = z
  .union([z.object({ expression: z.string() }), z.object({ kind: z.literal('at'), at: z.string() })])
  .meta({ id: 'ScheduleItem', description: 'A recurring cron entry, or a one-off start at a timestamp' });

const paramDefSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    description: z.string().optional(),
    default: z.union([z.string(), z.number(), z.boolean()]).optional(),
    enum: z.array(z.union([z.string(), z.number(), z.boolean()])).optional(),
    pattern: z.string().optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
  })
  .meta({ id: 'ParamDef' });

const dagSummaryFields = {
  name: z.string(),
  group: z.string(),
  schedule: z.array(scheduleItemSchema),
  description: z.string(),
  params: z.array(z.string()),
  defaultParams: z.string().describe('Shell-style `name="value"` pairs, not JSON'),
  labels: z.array(z.string()),
};

/** The `dag` of a list item, and all a definition that does not parse shows. */
export const dagSummarySchema = z.object(dagSummaryFields).meta({ id: 'DagSummary' });

export const dagDetailSchema = z
  .object({
    ...dagSummaryFields,
    type: z.string(),
    env: z.array(z.string()).describe('`KEY=value` strings'),
    log_dir: z.string(),
    handler_on: z.record(z.string(), stepSchema),
    steps: z.array(stepSchema),
    delay: z.number(),
    hist_retention_days: z.number(),
    histRetentionDays: z.number(),
    preconditions: z.array(preconditionSchema),
    max_active_runs: z.number(),
    max_active_steps: z.number(),
    paramDefs: z.array(paramDefSchema),
    paramSchema: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'DagDetail' });

/** A definition that does not parse has only the summary fields (all empty). */
const dagDetailOrSummary = z.union([dagDetailSchema, dagSummarySchema]);

export const dagListItemSchema = z
  .object({
    fileName: z.string(),
    dag: dagSummarySchema,
    nextRun: z.string(),
    latestDAGRun: runSummarySchema.nullable(),
    suspended: z.boolean(),
    errors: z.array(z.string()),
  })
  .meta({ id: 'DagListItem' });

export const dagListSchema = z.object({ dags: z.array(dagListItemSchema), errors: z.array(z.string()), pagination: paginationSchema });

export const dagDetailsResponseSchema = z.object({
  dag: dagDetailOrSummary,
  localDags: z.array(z.object({ name: z.string(), dag: dagDetailSchema.nullable(), errors: z.array(z.string()) })),
  latestDAGRun: runSummarySchema.nullable(),
  suspended: z.boolean(),
  errors: z.array(z.string()),
});

export const dagSpecSchema = z.object({ dag: dagDetailOrSummary, spec: z.string(), errors: z.array(z.string()) });

export const validationSchema = z.object({ valid: z.boolean(), errors: z.array(z.string()), dag: dagDetailSchema.optional() });

export const dagSearchSchema = z.object({
  results: z.array(
    z.object({
      name: z.string(),
      fileName: z.string(),
      dag: dagSummarySchema,
      matches: z.array(z.object({ line: z.string(), lineNumber: z.number().int(), startLine: z.number().int() })),
    }),
  ),
  errors: z.array(z.string()),
});

export const errorsOnlySchema = z.object({ errors: z.array(z.string()) });
