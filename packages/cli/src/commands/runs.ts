import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Command } from 'commander';
import { toError } from '@trellis/core/protocol';
import { ApiClient, ApiFailure } from '../api-client.js';
import { exitWith } from '../args.js';
import { RUN_EXIT_CODES, describeRun, getRun, runExitCode, runPath, watchRun } from '../run-watch.js';
import { clientCall, intervalOption, serverOption, tokenOption } from './client-options.js';

interface StartOptions {
  params?: string;
  runId?: string;
  queue?: string;
  profile?: string;
  wait?: boolean;
  interval: number;
  server: string;
  token?: string;
}

/** Waits for a run and prints every change; the exit code is the run's. */
async function waitFor(client: ApiClient, dag: string, id: string, intervalSec: number): Promise<number> {
  const run = await watchRun(client, dag, id, (r) => process.stdout.write(`${describeRun(r)}\n`), intervalSec * 1000);
  return runExitCode(run);
}

/**
 * The body of an inline run of a YAML file. The spec's own `name:` names the run, as it would a
 * stored DAG; the file name is sent only for a spec without one, since the API lets `name` win.
 */
async function inlineRun(path: string): Promise<{ name: string; body: Record<string, unknown> }> {
  const spec = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new ApiFailure(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? toError(error).message}`);
  });
  const fileName = basename(path, extname(path));
  // The DAG parser (yaml, zod and the schemas) is loaded by the commands that parse, not by every command.
  const { loadDag } = await import('@trellis/core');
  const name = loadDag(spec, { fileName }).dag?.name ?? fileName;
  return { name, body: name === fileName ? { spec, name } : { spec } };
}

function startAction(kind: 'start' | 'enqueue') {
  return (target: string, options: StartOptions): Promise<number> =>
    clientCall(async () => {
      const client = new ApiClient(options.server, options.token);
      const isFile = /\.ya?ml$/.test(target);
      const { name, body } = isFile ? await inlineRun(target) : { name: target, body: {} };
      if (options.params !== undefined) body.params = options.params;
      if (options.runId !== undefined) body.dagRunId = options.runId;
      if (options.queue !== undefined) body.queue = options.queue;
      if (options.profile !== undefined) body.profileName = options.profile;
      const path = isFile ? (kind === 'start' ? '/dag-runs' : '/dag-runs/enqueue') : `/dags/${encodeURIComponent(target)}/${kind}`;
      const id = String((await client.post(path, body)).dagRunId);
      process.stdout.write(`${id}\n`);
      return options.wait === true ? waitFor(client, name, id, options.interval) : 0;
    });
}

function addStart(program: Command, kind: 'start' | 'enqueue'): void {
  const command = program
    .command(`${kind} <dag>`)
    .summary(kind === 'start' ? 'start a run of a DAG (or of a YAML file) on a coordinator' : 'queue a run of a DAG (or of a YAML file) on a coordinator')
    .description(
      `${kind === 'start' ? 'Starts' : 'Queues'} a run and prints its id. DAG is the name of a stored DAG, or a path to a YAML file, which runs as an inline spec (never stored as a definition) named by the spec's \`name:\`, or by the file name when it has none.`,
    )
    .option('--params <json>', 'a JSON object of named values, a JSON array, or shell-style text (A=1 B=2)')
    .option('--run-id <id>', 'a custom run id')
    .option('--profile <name>', 'the runtime profile to run with (its variables and secrets become env vars of the steps)');
  if (kind === 'enqueue') command.option('--queue <name>', "a global queue other than the DAG's own");
  command
    .option('--wait', 'stream the run\'s status until it ends; the exit status is the run\'s')
    .addOption(intervalOption())
    .addOption(serverOption())
    .addOption(tokenOption())
    .addHelpText('after', `\n${RUN_EXIT_CODES}\n`)
    .action(exitWith(startAction(kind)));
}

interface StatusOptions {
  follow?: boolean;
  interval: number;
  server: string;
  token?: string;
}

function addStatus(program: Command): void {
  program
    .command('status <dag> [run-id]')
    .summary('show a run and its steps (--follow to watch it)')
    .description('Shows a run (the latest when RUN_ID is omitted) with its steps. --follow prints every change until the run ends, from the coordinator\'s event stream.')
    .option('--follow', 'keep watching until the run ends; the exit status is then the run\'s')
    .addOption(intervalOption())
    .addOption(serverOption())
    .addOption(tokenOption())
    .addHelpText('after', `\nWithout --follow the exit status is 0 when the run was shown. With --follow:\n${RUN_EXIT_CODES}\n`)
    .action(
      exitWith((dag: string, id: string | undefined, options: StatusOptions) =>
        clientCall(async () => {
          const client = new ApiClient(options.server, options.token);
          const run = await getRun(client, dag, id ?? 'latest');
          if (options.follow !== true) {
            process.stdout.write(`${describeRun(run)}\n`);
            return 0;
          }
          return waitFor(client, dag, run.dagRunId, options.interval);
        }),
      ),
    );
}

function addStop(program: Command): void {
  program
    .command('stop <dag> <run-id>')
    .summary('stop a run')
    .description('Stops a running run (a queued one leaves its queue).')
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((dag: string, id: string, options: { server: string; token?: string }) =>
        clientCall(async () => {
          await new ApiClient(options.server, options.token).post(`${runPath(dag, id)}/stop`);
          process.stdout.write(`stop requested for ${id}\n`);
          return 0;
        }),
      ),
    );
}

interface RetryOptions {
  runId?: string;
  wait?: boolean;
  interval: number;
  server: string;
  token?: string;
}

function addRetry(program: Command): void {
  program
    .command('retry <dag> <run-id>')
    .summary('run a finished run again')
    .description('Retries a finished run: a new attempt of the same run, or a new run with --run-id. Prints the id of the run that retries.')
    .option('--run-id <id>', 'start a new run with this id instead of a new attempt')
    .option('--wait', 'stream the run\'s status until it ends; the exit status is the run\'s')
    .addOption(intervalOption())
    .addOption(serverOption())
    .addOption(tokenOption())
    .addHelpText('after', `\n${RUN_EXIT_CODES}\n`)
    .action(
      exitWith((dag: string, id: string, options: RetryOptions) =>
        clientCall(async () => {
          const client = new ApiClient(options.server, options.token);
          const answer = await client.post(`${runPath(dag, id)}/retry`, options.runId !== undefined ? { dagRunId: options.runId } : {});
          const retried = String(answer.dagRunId);
          process.stdout.write(`${retried}\n`);
          return options.wait === true ? waitFor(client, dag, retried, options.interval) : 0;
        }),
      ),
    );
}

export function addRunCommands(program: Command): void {
  addStart(program, 'start');
  addStart(program, 'enqueue');
  addStatus(program);
  addStop(program);
  addRetry(program);
}
