import type { ComponentType } from 'react';

export interface PageComponent<P extends object> {
  (props: P): React.JSX.Element;
  /** Loads the page's chunk; the app awaits this for the first page before it renders. */
  preload: () => Promise<void>;
}

/**
 * A page in its own chunk. Unlike React.lazy, a page whose chunk was preloaded renders at once:
 * the first page of a visit never shows a Suspense fallback, whose reveal React throttles
 * (about 300 ms), so the first render is not held back. Later pages suspend while they load.
 */
export function pageChunk<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): PageComponent<P> {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<void> | undefined;
  const preload = (): Promise<void> =>
    (pending ??= load().then((module) => {
      loaded = module.default;
    }));
  const Page = (props: P) => {
    // Suspends until the chunk is in: Suspense's protocol is a thrown promise.
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (loaded === undefined) throw preload();
    const Loaded = loaded;
    return <Loaded {...props} />;
  };
  return Object.assign(Page, { preload });
}
