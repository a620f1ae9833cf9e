import { eventsAfter, lastEventId, type Db, type EventRecord } from '@trellis/store';
import { toError } from '@trellis/core';
import type { Logger } from '../logging/logger.js';

/** A run lifecycle event as the event log holds it. */
export type RunEvent = EventRecord;

const POLL_MS = 250;
const BATCH = 500;

export interface RunEventFilter {
  dagName?: string;
  dagRunId?: string;
  /** Step status changes too (kind `dag_node`), not only run status changes. */
  nodes?: boolean;
}

const RUN_KIND = 'dag_run';
const NODE_KIND = 'dag_node';
const KINDS = [RUN_KIND, NODE_KIND];

interface Subscriber {
  filter: RunEventFilter;
  send: (event: EventRecord) => void;
  /** The coordinator is shutting down: end the stream. */
  end: () => void;
}

/**
 * Follows the event log's run lifecycle and step status events and fans them out to live streams. The log is
 * written by every coordinator on the database, so a stream sees runs whichever coordinator
 * or worker moved them. It polls only while someone listens: one indexed query per 250 ms.
 */
export class RunEventHub {
  private readonly subscribers = new Set<Subscriber>();
  private cursor = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Streams events after `afterId` (a client's Last-Event-ID), or from now. */
  async subscribe(filter: RunEventFilter, afterId: number | undefined, send: (event: EventRecord) => void, end: () => void): Promise<() => void> {
    const subscriber: Subscriber = { filter, send, end };
    if (afterId !== undefined) {
      for (const event of await eventsAfter(this.db, afterId, filter.nodes === true ? KINDS : [RUN_KIND], BATCH)) if (matches(filter, event)) send(event);
    }
    if (this.subscribers.size === 0) {
      this.cursor = await lastEventId(this.db);
      this.timer = setInterval(() => void this.poll(), POLL_MS);
      this.timer.unref();
    }
    this.subscribers.add(subscriber);
    return () => {
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0) clearInterval(this.timer);
    };
  }

  stop(): void {
    clearInterval(this.timer);
    for (const subscriber of this.subscribers) subscriber.end();
    this.subscribers.clear();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const events = await eventsAfter(this.db, this.cursor, KINDS, BATCH);
      for (const event of events) {
        this.cursor = event.id;
        for (const subscriber of this.subscribers) if (matches(subscriber.filter, event)) subscriber.send(event);
      }
    } catch (error) {
      this.logger.warn('run event stream poll failed', { error: toError(error) });
    } finally {
      this.polling = false;
    }
  }
}

function matches(filter: RunEventFilter, event: EventRecord): boolean {
  if (event.kind === NODE_KIND && filter.nodes !== true) return false;
  return (filter.dagName === undefined || filter.dagName === event.dagName) && (filter.dagRunId === undefined || filter.dagRunId === event.dagRunId);
}
