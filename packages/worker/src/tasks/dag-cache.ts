import { createHash } from 'node:crypto';
import { selectDag, type SelectedDag } from '@trellis/core';

const MAX_ENTRIES = 256;

/**
 * Parsed definitions by content: a worker runs the same few DAGs over and over, and parsing
 * the YAML is a measurable share of a one-step run. Keys hash the text, so they never go stale.
 */
export class DagCache {
  private readonly entries = new Map<string, SelectedDag>();

  select(yaml: string, fileName: string, dagName: string): SelectedDag {
    const key = `${createHash('sha1').update(yaml).digest('hex')}\u0000${fileName}\u0000${dagName}`;
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const selected = selectDag(yaml, fileName, dagName);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, selected);
    return selected;
  }
}
