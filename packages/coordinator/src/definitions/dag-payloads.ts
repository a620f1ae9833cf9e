import { toDagDetail, toDagListItemDag, type DagListItemPayload } from '@trellis/core';
import type { runSummary } from '../runs/payloads.js';
import type { IndexedDag } from './dag-index.js';

/** What a definition that does not parse is listed as: its file name and nothing else. */
function emptyListItem(fileName: string): DagListItemPayload {
  return { name: fileName, group: '', schedule: [], description: '', params: [], defaultParams: '', labels: [] };
}

/** The contract's `dag` of a list item. */
export function listItemDag(entry: IndexedDag): DagListItemPayload {
  return entry.result.dag !== undefined ? toDagListItemDag(entry.result.dag) : emptyListItem(entry.fileName);
}

/** The parts of a list item that change only with the definition, as JSON text. */
interface ItemText {
  /** `{"fileName":...,"dag":{...}`: the item's opening, up to its first field that can change between requests. */
  head: string;
  errors: string;
}

/** Per indexed definition (a change indexes a new object, so an entry here is never stale). */
const itemTexts = new WeakMap<IndexedDag, ItemText>();

function itemText(entry: IndexedDag): ItemText {
  let text = itemTexts.get(entry);
  if (text === undefined) {
    const head = JSON.stringify({ fileName: entry.fileName, dag: listItemDag(entry) });
    text = { head: head.slice(0, -1), errors: JSON.stringify(entry.result.errors) };
    itemTexts.set(entry, text);
  }
  return text;
}

/**
 * The contract's DAG list item as JSON text. The definition's part is serialized once per
 * definition version (a page of 100 DAGs converted and serialized 100 definitions per request),
 * the latest run's summary comes as the database wrote it (`latestJson`, see RUN_SUMMARY_JSON).
 */
export function listItemJson(entry: IndexedDag, nextRun: string, latestJson = 'null', suspended = false): string {
  const { head, errors } = itemText(entry);
  return `${head},"nextRun":${JSON.stringify(nextRun)},"latestDAGRun":${latestJson},"suspended":${String(suspended)},"errors":${errors}}`;
}

/** The contract's DAG details, with its local DAGs and problems. */
export function dagDetails(entry: IndexedDag, latestJson?: string, suspended = false) {
  return {
    dag: entry.result.dag !== undefined ? toDagDetail(entry.result.dag) : { ...emptyListItem(entry.fileName) },
    localDags: entry.result.localDags.map((local) => ({ name: local.name, dag: local.dag !== undefined ? toDagDetail(local.dag) : null, errors: local.errors })),
    latestDAGRun: latestJson !== undefined ? (JSON.parse(latestJson) as ReturnType<typeof runSummary>) : null,
    suspended,
    errors: entry.result.errors,
  };
}
