import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { UsageError, intFlag, parseCommandArgs, stringFlag } from '../args.js';

const DEFAULT_SERVER = 'http://127.0.0.1:8080/api/v1';

const serverOption = `  --server URL    the API of a running coordinator (default ${DEFAULT_SERVER}; SVC_SERVER_URL)`;

export const startHelp = `Usage: trellis start DAG [--params JSON] [--run-id ID] [--server URL]
       trellis enqueue DAG [--params JSON] [--run-id ID] [--queue NAME] [--server URL]

Starts (or queues) a run on a coordinator. DAG is the name of a stored DAG, or a path to a
YAML file, which runs as an inline spec (never stored as a definition).

Options:
  --params JSON   a JSON object of named values, a JSON array, or shell-style text (A=1 B=2)
  --run-id ID     a custom run id
  --queue NAME    enqueue only: a global queue other than the DAG's own
${serverOption}
  -h, --help      show this help
`;

export const statusHelp = `Usage: trellis status DAG [RUN_ID] [--follow] [--server URL]

Shows a run (the latest when RUN_ID is omitted) with its steps. --follow repeats every
second until the run ends.

Options:
  --follow        keep watching until the run finishes
${serverOption}
  -h, --help      show this help
`;

export const stopHelp = `Usage: trellis stop DAG RUN_ID [--server URL]

Stops a running run (a queued one leaves its queue).

Options:
${serverOption}
  -h, --help      show this help
`;

class ApiFailure extends Error {}

async function api(server: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(server.replace(/\/$/, '') + path, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (error) {
    throw new ApiFailure(`cannot reach ${server}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    throw new ApiFailure(`unexpected answer from ${server} (HTTP ${res.status})`);
  }
  if (!res.ok) {
    const error = json as { code?: string; message?: string };
    throw new ApiFailure(`${error.code ?? String(res.status)}: ${error.message ?? text}`);
  }
  return json;
}

function serverOf(parsed: ReturnType<typeof parseCommandArgs>): string {
  return stringFlag(parsed, 'server') ?? process.env.SVC_SERVER_URL ?? DEFAULT_SERVER;
}

async function run(fn: () => Promise<void>): Promise<number> {
  try {
    await fn();
    return 0;
  } catch (error) {
    if (error instanceof ApiFailure) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

export function startCommand(kind: 'start' | 'enqueue') {
  return async (argv: string[]): Promise<number> => {
    const parsed = parseCommandArgs(argv, { params: { type: 'string' }, 'run-id': { type: 'string' }, queue: { type: 'string' }, server: { type: 'string' } });
    if (parsed.values.help === true) {
      process.stdout.write(startHelp);
      return 0;
    }
    const [target] = parsed.positionals;
    if (target === undefined) throw new UsageError('name a DAG or a YAML file');
    const queue = stringFlag(parsed, 'queue');
    if (queue !== undefined && kind === 'start') throw new UsageError('--queue goes with enqueue');
    const body: Record<string, unknown> = {};
    const params = stringFlag(parsed, 'params');
    if (params !== undefined) body.params = params;
    const runId = stringFlag(parsed, 'run-id');
    if (runId !== undefined) body.dagRunId = runId;
    if (queue !== undefined) body.queue = queue;
    return run(async () => {
      const isFile = /\.ya?ml$/.test(target);
      const path = isFile ? (kind === 'start' ? '/dag-runs' : '/dag-runs/enqueue') : `/dags/${encodeURIComponent(target)}/${kind}`;
      if (isFile) {
        body.spec = await readFile(target, 'utf8');
        body.name = basename(target, extname(target));
      }
      const answer = await api(serverOf(parsed), 'POST', path, body);
      process.stdout.write(`${String(answer.dagRunId)}\n`);
    });
  };
}

/** The fields of a run payload this command prints. */
interface RunView {
  name: string;
  dagRunId: string;
  status: number;
  statusLabel: string;
  error?: string;
  nodes?: Array<{ step: { name: string }; statusLabel: string; error: string }>;
  conditions?: Array<{ reason: string; message: string }>;
}

function describe(run: RunView): string {
  const lines = [`${run.name} ${run.dagRunId}: ${run.statusLabel}${run.error !== undefined && run.error !== '' ? ` (${run.error})` : ''}`];
  for (const node of run.nodes ?? []) lines.push(`  ${node.step.name}: ${node.statusLabel}${node.error !== '' ? ` (${node.error})` : ''}`);
  for (const condition of run.conditions ?? []) lines.push(`  waiting: ${condition.reason}: ${condition.message}`);
  return lines.join('\n');
}

export async function statusCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(argv, { follow: { type: 'boolean' }, server: { type: 'string' }, interval: { type: 'string' } });
  if (parsed.values.help === true) {
    process.stdout.write(statusHelp);
    return 0;
  }
  const [dag, id] = parsed.positionals;
  if (dag === undefined) throw new UsageError('name a DAG');
  const interval = (intFlag(parsed, 'interval') ?? 1) * 1000;
  return run(async () => {
    for (;;) {
      const answer = await api(serverOf(parsed), 'GET', `/dag-runs/${encodeURIComponent(dag)}/${encodeURIComponent(id ?? 'latest')}`);
      const dagRun = answer.dagRun as RunView;
      process.stdout.write(`${describe(dagRun)}\n`);
      if (parsed.values.follow !== true || ![0, 1, 5, 7].includes(dagRun.status)) return;
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  });
}

export async function stopCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(argv, { server: { type: 'string' } });
  if (parsed.values.help === true) {
    process.stdout.write(stopHelp);
    return 0;
  }
  const [dag, id] = parsed.positionals;
  if (dag === undefined || id === undefined) throw new UsageError('name a DAG and a run id');
  return run(async () => {
    await api(serverOf(parsed), 'POST', `/dag-runs/${encodeURIComponent(dag)}/${encodeURIComponent(id)}/stop`);
    process.stdout.write(`stop requested for ${id}\n`);
  });
}
