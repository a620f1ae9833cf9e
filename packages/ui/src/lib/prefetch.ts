/**
 * Answers asked for before the page that needs them is in: the app starts the first page's
 * requests together with the download of its code chunk, and the page, once rendered, takes
 * the answer already on its way instead of asking again.
 */
interface Early {
  answer: Promise<unknown>;
  at: number;
  /** The answer once it has arrived, so a page can render with it at once. */
  arrived?: { value: unknown };
}

/** An answer nobody took this soon is not trusted later (a page visited afterwards asks afresh). */
const FRESH_MS = 10_000;
const early = new Map<string, Early>();

export interface Prefetchable<A extends unknown[], T> {
  /** The answer: the prefetched one when it is fresh, else a new request. */
  (...args: A): Promise<T>;
  /** Starts the request now, for the next call with the same arguments. */
  prefetch: (...args: A) => void;
  /**
   * The prefetched answer when it has already arrived (it is then taken, as a call would take
   * it), else undefined: a page's first render shows it instead of a loading state.
   */
  arrived: (...args: A) => T | undefined;
}

export function prefetchable<A extends unknown[], T>(name: string, load: (...args: A) => Promise<T>): Prefetchable<A, T> {
  const keyOf = (args: A) => `${name} ${JSON.stringify(args)}`;
  const fresh = (key: string): Early | undefined => {
    const found = early.get(key);
    return found !== undefined && Date.now() - found.at < FRESH_MS ? found : undefined;
  };
  const take = (...args: A): Promise<T> => {
    const key = keyOf(args);
    const found = fresh(key);
    early.delete(key);
    return found !== undefined ? (found.answer as Promise<T>) : load(...args);
  };
  const arrived = (...args: A): T | undefined => {
    const key = keyOf(args);
    const found = fresh(key)?.arrived;
    if (found !== undefined) early.delete(key);
    return found?.value as T | undefined;
  };
  const prefetch = (...args: A): void => {
    const key = keyOf(args);
    if (early.has(key)) return;
    const answer = load(...args);
    const entry: Early = { answer, at: Date.now() };
    // A failure is reported to the page that takes it, not as an unhandled rejection meanwhile.
    answer.then(
      (value) => {
        entry.arrived = { value };
      },
      () => undefined,
    );
    early.set(key, entry);
  };
  return Object.assign(take, { prefetch, arrived });
}
