import { toDagDetail, toDagListItemDag, type DagListItemPayload } from '@trellis/core';
import type { RunRecord } from '@trellis/store';
import { runSummary } from '../runs/payloads.js';
import type { IndexedDag } from './dag-index.js';

/** What a definition that does not parse is listed as: its file name and nothing else. */
function emptyListItem(fileName: string): DagListItemPayload {
  return { name: fileName, group: '', schedule: [], description: '', params: [], defaultParams: '', labels: [] };
}

/** The contract's `dag` of a list item. */
export function listItemDag(entry: IndexedDag): DagListItemPayload {
  return entry.result.dag !== undefined ? toDagListItemDag(entry.result.dag) : emptyListItem(entry.fileName);
}

/** The contract's DAG list item. */
export function listItem(entry: IndexedDag, nextRun: string, latest?: RunRecord, suspended = false) {
  return {
    fileName: entry.fileName,
    dag: listItemDag(entry),
    nextRun,
    latestDAGRun: latest !== undefined ? runSummary(latest) : null,
    suspended,
    errors: entry.result.errors,
  };
}

/** The contract's DAG details, with its local DAGs and problems. */
export function dagDetails(entry: IndexedDag, latest?: RunRecord, suspended = false) {
  return {
    dag: entry.result.dag !== undefined ? toDagDetail(entry.result.dag) : { ...emptyListItem(entry.fileName) },
    localDags: entry.result.localDags.map((local) => ({ name: local.name, dag: local.dag !== undefined ? toDagDetail(local.dag) : null, errors: local.errors })),
    latestDAGRun: latest !== undefined ? runSummary(latest) : null,
    suspended,
    errors: entry.result.errors,
  };
}
