import { useState, useSyncExternalStore, type ReactNode } from 'react';
import { absoluteTime, parseTime, relativeTime } from '../lib/time';
import { nodeStatusWord, runStatusWord, toneOf } from '../lib/status';

/** One clock for every relative time on the page (a page may show hundreds), ticking twice a minute. */
const clock = {
  now: Date.now(),
  listeners: new Set<() => void>(),
  timer: undefined as ReturnType<typeof setInterval> | undefined,
  subscribe: (listener: () => void): (() => void) => {
    clock.listeners.add(listener);
    clock.timer ??= setInterval(() => {
      clock.now = Date.now();
      clock.listeners.forEach((l) => l());
    }, 30_000);
    return () => {
      clock.listeners.delete(listener);
      if (clock.listeners.size === 0 && clock.timer !== undefined) {
        clearInterval(clock.timer);
        clock.timer = undefined;
      }
    };
  },
};

/** A time shown relative ("3 minutes ago") and absolute (in the user's zone). */
export function Time({ value, empty = '—' }: { value: string | undefined; empty?: string }) {
  useSyncExternalStore(clock.subscribe, () => clock.now);
  const date = parseTime(value);
  if (date === undefined) return <span className="muted">{empty}</span>;
  return (
    <time dateTime={date.toISOString()} title={absoluteTime(date)}>
      {relativeTime(date)} <span className="muted small">({absoluteTime(date)})</span>
    </time>
  );
}

export function RunStatus({ status }: { status: number }) {
  const word = runStatusWord(status);
  return <span className={`badge tone-${toneOf(word)}`}>{word}</span>;
}

export function NodeStatus({ status }: { status: number }) {
  const word = nodeStatusWord(status);
  return <span className={`badge tone-${toneOf(word)}`}>{word}</span>;
}

/** A coloured dot for one run; its status is its accessible name. */
export function StatusDot({ status, label }: { status: number; label?: string }) {
  const word = runStatusWord(status);
  return <span className={`dot tone-${toneOf(word)}`} role="img" aria-label={label ?? word} title={label ?? word} />;
}

/** An API error with its message, never a blank page. */
export function ErrorNote({ error }: { error: Error | undefined }) {
  if (error === undefined) return null;
  return (
    <div className="error" role="alert">
      {error.message}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Page({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="page">
      <header className="page-head">
        <h1>{title}</h1>
        {actions !== undefined ? <div className="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** Runs an action, showing its error in place; returns [run, busy, error]. */
export function useAction(): [(action: () => Promise<unknown>) => Promise<boolean>, boolean, Error | undefined] {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return [run, busy, error];
}

/** A secret the API returns once (an API key, a webhook token): shown until the page is left. */
export function SecretOnce({ what, value }: { what: string; value: string | undefined }) {
  if (value === undefined) return null;
  return (
    <div className="card" role="status">
      Copy the {what} now; it is not shown again: <code>{value}</code>
    </div>
  );
}
