import { selectDag, type SelectedDag } from '@trellis/core';
import { getSpecYaml, type Db } from '@trellis/store';

const MAX_ENTRIES = 512;

/**
 * Recorded definitions by content hash, and the DAG each run selects from them. A hash names
 * immutable text, so entries never go stale; the map only bounds memory. Every run of a DAG
 * would otherwise read its definition back from the database and parse the YAML again.
 */
export class SpecCache {
  private readonly texts = new Map<string, string>();
  private readonly dags = new Map<string, SelectedDag>();

  constructor(private readonly db: Db) {}

  async yaml(hash: string): Promise<string | undefined> {
    const cached = this.texts.get(hash);
    if (cached !== undefined) return cached;
    const text = await getSpecYaml(this.db, hash);
    if (text !== undefined) remember(this.texts, hash, text);
    return text;
  }

  /** The DAG a run of `dagName` executes from the definition with this hash. */
  async select(hash: string, fileName: string, dagName: string): Promise<SelectedDag | undefined> {
    const key = `${hash}\u0000${fileName}\u0000${dagName}`;
    const cached = this.dags.get(key);
    if (cached !== undefined) return cached;
    const text = await this.yaml(hash);
    if (text === undefined) return undefined;
    const selected = selectDag(text, fileName, dagName);
    remember(this.dags, key, selected);
    return selected;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
}
