import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { addDryCommand } from './commands/dry.js';
import { addListingCommands } from './commands/listings.js';
import { addLogsCommand } from './commands/logs.js';
import { addRunCommands } from './commands/runs.js';
import { addServerCommand } from './commands/server.js';
import { addValidateCommand } from './commands/validate.js';
import { addWorkerCommand } from './commands/worker.js';
import { addProfileCommands } from './commands/profiles.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** The `trellis` command and its subcommands. */
export function buildProgram(): Command {
  const program = new Command('trellis')
    .description('Trellis: DAGs of steps written in YAML, run by a coordinator and its worker daemons.')
    .version(version, '-V, --version', 'print the version')
    // Settings inherited by every subcommand defined after them: usage errors are thrown, not exited on.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
Client commands (start, enqueue, status, logs, list, history, retry, stop, profiles,
secrets) talk to the
coordinator at --server (default http://127.0.0.1:8080/api/v1, or SVC_SERVER_URL).
Exit status: 0 on success; 1 when a run waited for failed (or was aborted or rejected), or
the coordinator refused the request; 2 for a usage error or bad configuration; 3 when the
coordinator refused a worker. Run 'trellis <command> --help' for a command's options.
`,
    );
  addServerCommand(program);
  addWorkerCommand(program);
  addRunCommands(program);
  addLogsCommand(program);
  addListingCommands(program);
  addValidateCommand(program);
  addDryCommand(program);
  addProfileCommands(program);
  return program;
}

/** Runs `trellis` with the arguments after the program name; resolves to the exit code. */
export async function runCli(args: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(args, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    // Commander has already printed the help, the version or what was wrong with the usage.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
}
