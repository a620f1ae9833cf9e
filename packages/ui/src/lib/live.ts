import { useEffect, useRef } from 'react';
import { followRunEvents, type RunEvent } from '../api/events';

/**
 * Follows the run event stream at `path` (every run, one DAG's, or one run's) while mounted,
 * calling `onEvent` with each change. Bursts are coalesced: at most one call per `throttleMs`.
 */
export function useRunEvents(path: string, onEvent: (event: RunEvent) => void, throttleMs = 250): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    let pending: RunEvent | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = followRunEvents(path, (event) => {
      pending = event;
      timer ??= setTimeout(() => {
        timer = undefined;
        if (pending !== undefined) handler.current(pending);
      }, throttleMs);
    });
    return () => {
      stop();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [path, throttleMs]);
}
