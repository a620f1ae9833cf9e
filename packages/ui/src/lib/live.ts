import { useEffect, useRef } from 'react';
import { followRunEvents, type NodeEvent, type RunEvent } from '../api/events';

export interface LiveOptions {
  /** Bursts of run changes are coalesced: at most one call per this many milliseconds. */
  throttleMs?: number;
  /** Step changes (the path must ask for `nodes=true`): every one of a burst, in order, in one call. */
  onNodes?: (events: NodeEvent[]) => void;
  /** The stream is open: what was loaded before may have missed a change (see followRunEvents). */
  onOpen?: () => void;
}

/**
 * Follows the run event stream at `path` (every run, one DAG's, or one run's) while mounted,
 * calling `onEvent` with each run change; with `onNodes`, step changes arrive too, so a page
 * applies them without fetching the run again.
 */
export function useRunEvents(path: string, onEvent: (event: RunEvent) => void, options: LiveOptions = {}): void {
  const throttleMs = options.throttleMs ?? 250;
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const nodeHandler = useRef(options.onNodes);
  nodeHandler.current = options.onNodes;
  const openHandler = useRef(options.onOpen);
  openHandler.current = options.onOpen;
  useEffect(() => {
    let pending: RunEvent | undefined;
    let nodes: NodeEvent[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = (): void => {
      timer = undefined;
      if (nodes.length > 0) nodeHandler.current?.(nodes);
      nodes = [];
      if (pending !== undefined) handler.current(pending);
      pending = undefined;
    };
    const stop = followRunEvents(path, (event) => {
      if (event.name === 'node') nodes.push(event.data);
      else pending = event.data;
      timer ??= setTimeout(flush, throttleMs);
    }, () => openHandler.current?.());
    return () => {
      stop();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [path, throttleMs]);
}
