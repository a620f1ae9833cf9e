/**
 * Identical reads in flight share one answer: a dashboard polled by many clients, or one client
 * asking the same page again while it loads, costs one read and one serialization per turn
 * instead of one per request.
 *
 * A caller never gets the answer of a read that began before it asked (read-your-writes: a
 * change acknowledged to it before it asked must be in the answer). So a caller that finds a
 * read of its key running waits for the next one, which starts when the running one settles,
 * and every caller that arrives meanwhile shares that next read too.
 */
export class ReadCoalescer<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /** The answer of a read of `key` that starts no earlier than this call; `read` is called only when one must start. */
  read(key: string, read: () => Promise<T>): Promise<T> {
    const flight = this.flights.get(key);
    if (flight === undefined) return this.start(key, read);
    const settled = (): void => undefined;
    flight.next ??= flight.running.then(settled, settled).then(() => this.start(key, read));
    return flight.next;
  }

  /** Keys with a read running (each entry lives only while a read of its key does). */
  get inFlight(): number {
    return this.flights.size;
  }

  private start(key: string, read: () => Promise<T>): Promise<T> {
    const running = Promise.resolve().then(read);
    const flight: Flight<T> = { running };
    this.flights.set(key, flight);
    // Registered before any waiter's continuation, so it sees whether a next read was asked for.
    const settle = (): void => {
      if (this.flights.get(key) === flight && flight.next === undefined) this.flights.delete(key);
    };
    running.then(settle, settle);
    return running;
  }
}

interface Flight<T> {
  running: Promise<T>;
  /** The read the callers who came while `running` ran wait for; it starts once `running` settles. */
  next?: Promise<T>;
}
