import { useCallback, useEffect, useRef, useState } from 'react';

export interface Resource<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again, keeping the data shown until the new answer arrives. */
  reload: () => void;
  /** Changes the data shown in place (a live change that needs no fetch). */
  update: (change: (data: T) => T) => void;
}

/**
 * Loads what `load` fetches whenever `deps` change; reload() fetches again (live updates call
 * it). `arrived` may give the first data at once (a prefetched answer already in): the first
 * render shows it, with no loading state and no second render.
 */
export function useResource<T>(load: () => Promise<T>, deps: readonly unknown[], arrived?: () => T | undefined): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>(() => {
    const data = arrived?.();
    return data !== undefined ? { data, loading: false } : { loading: true };
  });
  const hadFirst = useRef(state.data !== undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    loadRef.current().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) => mine === generation.current && setState((s) => ({ ...s, error: error instanceof Error ? error : new Error(String(error)), loading: false })),
    );
  }, []);
  const update = useCallback((change: (data: T) => T) => setState((s) => (s.data !== undefined ? { ...s, data: change(s.data) } : s)), []);
  useEffect(() => {
    if (hadFirst.current) {
      hadFirst.current = false;
      return;
    }
    setState({ loading: true });
    reload();
  }, deps);
  return { data: state.data, error: state.error, loading: state.loading, reload, update };
}

/** Calls `tick` every `ms` while `active`. */
export function useInterval(tick: () => void, ms: number, active: boolean): void {
  const tickRef = useRef(tick);
  tickRef.current = tick;
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(() => tickRef.current(), ms);
    return () => clearInterval(timer);
  }, [ms, active]);
}
