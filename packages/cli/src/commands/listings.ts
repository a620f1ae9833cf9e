import type { Command } from 'commander';
import { ApiClient } from '../api-client.js';
import { exitWith, integerAtLeast } from '../args.js';
import type { RunView } from '../run-watch.js';
import { table } from '../table.js';
import { clientCall, serverOption, tokenOption } from './client-options.js';


interface DagListItem {
  fileName: string;
  dag: { schedule: Array<{ expression?: string; at?: string }> };
  latestDAGRun?: RunView | null;
  suspended: boolean;
  errors: string[];
}

interface Pagination {
  nextPage: number | null;
}

function addList(program: Command): void {
  program
    .command('list')
    .summary('list the DAGs of a coordinator')
    .description('Lists every stored DAG: its schedule, its latest run, and whether it is suspended or invalid.')
    .option('--name <text>', 'only DAGs whose name contains this')
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((options: { name?: string; server: string; token?: string }) =>
        clientCall(async () => {
          const client = new ApiClient(options.server, options.token);
          const rows = [['NAME', 'SCHEDULE', 'LATEST RUN', 'STATE']];
          for (let page: number | null = 1; page !== null; ) {
            const answer = await client.get('/dags', { page, perPage: 1000, name: options.name });
            for (const item of answer.dags as DagListItem[]) {
              const schedule = item.dag.schedule.map((s) => s.expression ?? `at ${s.at ?? ''}`).join(', ');
              const latest = item.latestDAGRun !== undefined && item.latestDAGRun !== null ? `${item.latestDAGRun.statusLabel} ${item.latestDAGRun.dagRunId}` : '-';
              const state = item.errors.length > 0 ? 'invalid' : item.suspended ? 'suspended' : 'active';
              rows.push([item.fileName, schedule === '' ? '-' : schedule, latest, state]);
            }
            page = (answer.pagination as Pagination).nextPage;
          }
          process.stdout.write(`${table(rows)}\n`);
          return 0;
        }),
      ),
    );
}

function addHistory(program: Command): void {
  program
    .command('history <dag>')
    .summary('list the runs of a DAG, newest first')
    .description('Lists the runs of one DAG, newest first.')
    .option('--limit <n>', 'how many runs (1-500)', integerAtLeast(1), 20)
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((dag: string, options: { limit: number; server: string; token?: string }) =>
        clientCall(async () => {
          const answer = await new ApiClient(options.server, options.token).get(`/dag-runs/${encodeURIComponent(dag)}`, { limit: options.limit });
          const rows = [['RUN ID', 'STATUS', 'STARTED', 'FINISHED']];
          for (const run of answer.dagRuns as RunView[]) rows.push([run.dagRunId, run.statusLabel, run.startedAt || '-', run.finishedAt || '-']);
          process.stdout.write(`${table(rows)}\n`);
          return 0;
        }),
      ),
    );
}

export function addListingCommands(program: Command): void {
  addList(program);
  addHistory(program);
}
