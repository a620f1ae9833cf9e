import { createHash } from 'node:crypto';
import { toError, NodeStatus, RunStatus, expandReferences, readJsonPath, runStatusLabel, type Step } from '@trellis/core';
import type { SubRunHandle } from '../types.js';
import type { NodeState } from './node-state.js';
import { continueCovers } from './policies.js';
import type { RunHost } from './run-host.js';

type ChildResult = { status: RunStatus; outputs: Record<string, string>; error?: string };

/**
 * Sub-DAG steps (`call`, `parallel`): one child run per item, launched through the host's
 * launcher, at most `max_concurrent` at once; the step settles on the children's outcomes.
 */
export class SubDags {
  constructor(private readonly host: RunHost) {}

  async run(node: NodeState): Promise<void> {
    const { options, env } = this.host;
    const launch = options.launchSubRun;
    const dagName = node.step.call;
    if (launch === undefined || dagName === undefined) return node.finish(NodeStatus.Failed, 'sub-DAG runs are not available in this host');
    const items = this.parallelItems(node);
    const list = items ?? [undefined];
    const localDag = options.localDags?.find((d) => d.name === dagName);
    const results: ChildResult[] = [];
    const started = new Set<SubRunHandle>();
    let failure: string | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < list.length && this.host.stopReason() === undefined && failure === undefined) {
        const index = next++;
        const item = list[index];
        const itemText = item === undefined ? undefined : typeof item === 'string' ? item : JSON.stringify(item);
        let params: string;
        try {
          params = this.subRunParams(node.step, itemText);
        } catch (error) {
          // One item's params cannot be built: launch no more and stop this step's children, so none outlives the failed node.
          failure = `sub-run ${index}: ${toError(error).message}`;
          for (const child of started) child.stop();
          return;
        }
        const dagRunId = this.childRunId(node, index);
        const ref = { dagRunId, name: dagName, params: env.masker.mask(params), status: RunStatus.Running as RunStatus, statusLabel: runStatusLabel(RunStatus.Running) };
        node.subRuns.push(ref);
        this.host.emit();
        const handle = launch({
          dagName,
          ...(localDag !== undefined ? { localDag } : {}),
          dagRunId,
          params,
          parent: options.identity,
          ...(node.step.workerSelector !== undefined ? { workerSelector: node.step.workerSelector } : {}),
          env: itemText !== undefined ? { ITEM: itemText } : {},
          maskValues: env.masker.valuesIn(params, ...(itemText !== undefined ? [itemText] : [])),
        });
        this.host.children.add(handle);
        started.add(handle);
        const result = await handle.done.catch((error: unknown) => ({ status: RunStatus.Failed as RunStatus, outputs: {}, error: toError(error).message }));
        this.host.children.delete(handle);
        started.delete(handle);
        ref.status = result.status;
        ref.statusLabel = runStatusLabel(result.status);
        results[index] = result;
        this.host.emit();
      }
    };
    const concurrency = items !== undefined ? Math.max(1, node.step.parallel?.maxConcurrent ?? 1) : 1;
    await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, () => worker()));
    if (failure !== undefined) return node.finish(NodeStatus.Failed, failure);
    this.settle(node, results, items !== undefined);
  }

  private parallelItems(node: NodeState): unknown[] | undefined {
    const parallel = node.step.parallel;
    if (parallel === undefined) return undefined;
    if (Array.isArray(parallel.items)) return parallel.items;
    const text = this.host.env.expand(parallel.items).trim();
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed as unknown[];
    } catch {
      // not JSON: a whitespace-separated list
    }
    return text === '' ? [] : text.split(/\s+/);
  }

  private childRunId(node: NodeState, index: number): string {
    const id = this.host.options.identity;
    return createHash('sha256').update(`${id.dagRunId}/${id.attemptId}/${node.step.name}/${index}`).digest('hex').slice(0, 32);
  }

  /** A child's params with `${ITEM}` (and `${ITEM.path}`) expanded for its item: what the child gets is what is recorded. */
  private subRunParams(step: Step, item: string | undefined): string {
    const env = this.host.env;
    const expand = (text: string): string =>
      expandReferences(text, (head, path) => {
        if (head !== 'ITEM' || item === undefined) return env.resolveRef(head, path);
        return path.length === 0 ? item : readJsonPath(item, path);
      });
    if (typeof step.params === 'string') return expand(step.params);
    return step.params !== undefined ? JSON.stringify(env.expandDeepWith(step.params, expand)) : '';
  }

  private settle(node: NodeState, results: ChildResult[], parallel: boolean): void {
    const [first] = results;
    if (!parallel && first !== undefined) node.childOutputs = first.outputs;
    const outputValue = parallel ? JSON.stringify(results.map((r) => r.outputs)) : JSON.stringify(first?.outputs ?? {});
    node.output = outputValue;
    if (node.step.output !== undefined) this.host.env.vars.set(node.step.output.name, outputValue);
    if (this.host.stopReason() !== undefined) return node.finish(NodeStatus.Cancelled, 'stopped');
    const failed = results.filter((r) => r.status !== RunStatus.Success && r.status !== RunStatus.PartialSuccess);
    if (failed.length === 0) return node.finish(NodeStatus.Success);
    const error = `${failed.length} of ${results.length} sub-run(s) did not succeed${failed[0]?.error !== undefined ? `: ${failed[0].error}` : ''}`;
    if (continueCovers(node.step.continueOn, 1, '')) {
      if (node.step.continueOn.markSuccess) return node.finish(NodeStatus.Success);
      node.coveredFailure = true;
    }
    node.finish(NodeStatus.Failed, error);
  }
}
