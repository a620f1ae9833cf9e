/** The step and precondition objects, shared by DAG details and run nodes. */
import { z } from 'zod';

export const preconditionSchema = z
  .object({ condition: z.string(), expected: z.string(), error: z.string(), negate: z.boolean().optional() })
  .meta({ id: 'Precondition' });

export const stepSchema = z
  .object({
    name: z.string(),
    id: z.string(),
    description: z.string(),
    type: z.string(),
    dir: z.string(),
    command: z.string(),
    args: z.array(z.string()),
    script: z.string(),
    run: z.string().describe('Name of the sub-DAG a `dag` step calls'),
    params: z.string(),
    stdout: z.string(),
    stderr: z.string(),
    output: z.string(),
    depends: z.array(z.string()),
    preconditions: z.array(preconditionSchema),
    repeat_policy: z.object({ repeat: z.boolean(), interval: z.number() }),
    mail_on_error: z.boolean(),
    approval: z
      .object({ prompt: z.string(), input: z.array(z.string()).describe('Names of the inputs a decision carries (env vars of later steps)'), required: z.array(z.string()).describe('Inputs an approval must give') })
      .optional()
      .describe('Present on steps that wait for approval'),
  })
  .meta({ id: 'Step' });
