import { listEvents, type Db, type EventFilter, type EventRecord } from '@trellis/store';

export interface EventLogQuery extends Omit<EventFilter, 'offset' | 'cursor'> {
  paginationMode: 'offset' | 'cursor';
  offset?: number | undefined;
  cursor?: string | undefined;
}

function eventBody(event: EventRecord) {
  return { ...event, id: String(event.id), occurredAt: event.occurredAt.toISOString() };
}

/** Reading the event log: run lifecycle, worker registration and loss, scheduler leadership, definition changes. */
export class EventLog {
  constructor(private readonly db: Db) {}

  /** Events newest first, by offset (with the total) or by cursor (with the next cursor). */
  async list(query: EventLogQuery) {
    const { paginationMode, cursor, offset, ...filter } = query;
    const page =
      paginationMode === 'cursor'
        ? await listEvents(this.db, { ...filter, ...(cursor !== undefined ? { cursor } : {}) })
        : await listEvents(this.db, { ...filter, offset: offset ?? 0 });
    return {
      entries: page.events.map(eventBody),
      ...(page.total !== undefined ? { total: page.total, limit: query.limit, offset: offset ?? 0 } : {}),
      ...(paginationMode === 'cursor' ? { nextCursor: page.nextCursor ?? null } : {}),
    };
  }
}
