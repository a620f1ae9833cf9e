#!/usr/bin/env node
import { UsageError } from './args.js';
import { serverCommand } from './commands/server.js';
import { workerCommand } from './commands/worker.js';
import { validateCommand } from './commands/validate.js';
import { dryCommand } from './commands/dry.js';
import { startCommand, statusCommand, stopCommand } from './commands/client.js';

const usage = `Usage: trellis <command> [options]

Commands:
  server     run the coordinator (REST API, queues, local executor, worker gRPC) on this host
  worker     run a worker daemon that takes runs from a coordinator
  start      start a run of a DAG (or of a YAML file) on a coordinator
  enqueue    queue a run of a DAG on a coordinator
  status     show a run and its steps (--follow to watch it)
  stop       stop a run
  validate   check DAG definition files
  dry        show what a run of a DAG file would do, without running it

Run 'trellis <command> --help' for a command's options.
`;

const commands: Record<string, (argv: string[]) => Promise<number>> = {
  server: serverCommand,
  worker: workerCommand,
  start: startCommand('start'),
  enqueue: startCommand('enqueue'),
  status: statusCommand,
  stop: stopCommand,
  validate: validateCommand,
  dry: dryCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (command === undefined) {
    process.stderr.write(`trellis: unknown command "${name}"\n\n${usage}`);
    return 2;
  }
  try {
    return await command(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`trellis ${name}: ${error.message}\nRun 'trellis ${name} --help' for usage.\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
