import type { Command } from 'commander';
import { isTerminalRunStatus } from '@trellis/core/protocol';
import { ApiClient } from '../api-client.js';
import { exitWith, integerAtLeast } from '../args.js';
import { RUN_EXIT_CODES, getRun, runExitCode, runPath } from '../run-watch.js';
import { clientCall, intervalOption, serverOption, tokenOption } from './client-options.js';

/** The contract's log page. */
interface LogPage {
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
}

/** The most lines the API gives in one page. */
const PAGE_LINES = 10_000;

interface LogsOptions {
  step?: string;
  stderr?: boolean;
  tail?: number;
  follow?: boolean;
  interval: number;
  server: string;
  token?: string;
}

/**
 * Prints a log as a stream. The API pages whole lines and cannot say whether the last one is
 * finished, so that line is printed without its newline and read again next time: what it
 * gained is printed then, and the newline once a later line or the end of the run shows it ended.
 */
async function printLog(dag: string, id: string | undefined, options: LogsOptions): Promise<number> {
  const client = new ApiClient(options.server, options.token);
  // `latest` is resolved once, so a follow stays on this run when another one starts.
  const runId = (await getRun(client, dag, id ?? 'latest')).dagRunId;
  const path = options.step !== undefined ? `${runPath(dag, runId)}/steps/${encodeURIComponent(options.step)}/log` : `${runPath(dag, runId)}/log`;
  const stream = options.stderr === true ? 'stderr' : undefined;
  // The 1-based line to read from next; undefined until the first page when that is a tail.
  let offset = options.tail === undefined ? 1 : undefined;
  // The last line printed without its newline, when there is one.
  let open: string | undefined;
  for (;;) {
    // The run is looked at before its log: a log read after the run ended is complete.
    const run = options.follow === true ? await getRun(client, dag, runId) : undefined;
    const ended = run === undefined || isTerminalRunStatus(run.status);
    const page = (await client.get(path, offset === undefined ? { tail: options.tail, stream } : { offset, limit: PAGE_LINES, stream })) as unknown as LogPage;
    const lines = page.lineCount === 0 ? [] : page.content.split('\n');
    const start = offset ?? page.totalLines - lines.length + 1;
    const more = offset !== undefined && page.hasMore;
    let out = '';
    lines.forEach((line, i) => {
      out += i === 0 && open !== undefined ? line.slice(open.length) : `${open !== undefined ? '\n' : ''}${line}`;
      open = line;
    });
    offset = lines.length > 0 ? start + lines.length - 1 : start;
    if (open !== undefined && (more || ended)) {
      out += '\n';
      open = undefined;
      offset = start + lines.length;
    }
    process.stdout.write(out);
    if (more) continue;
    if (ended) return run === undefined ? 0 : runExitCode(run);
    await new Promise((resolve) => setTimeout(resolve, options.interval * 1000));
  }
}

export function addLogsCommand(program: Command): void {
  program
    .command('logs <dag> [run-id]')
    .summary("print a run's log or a step's output (--follow to keep printing)")
    .description("Prints the log of a run (the latest when RUN_ID is omitted), or with --step the output of one of its steps. --follow keeps printing new lines until the run ends.")
    .option('--step <name>', "a step's stdout instead of the run log")
    .option('--stderr', "with --step: the step's stderr")
    .option('--tail <n>', 'only the last N lines (then new ones, with --follow)', integerAtLeast(1))
    .option('--follow', 'keep printing until the run ends; the exit status is then the run\'s')
    .addOption(intervalOption('with --follow: how often to look for new lines'))
    .addOption(serverOption())
    .addOption(tokenOption())
    .addHelpText('after', `\nWithout --follow the exit status is 0 when the log was printed. With --follow:\n${RUN_EXIT_CODES}\n`)
    .action(exitWith((dag: string, id: string | undefined, options: LogsOptions) => clientCall(() => printLog(dag, id, options))));
}
