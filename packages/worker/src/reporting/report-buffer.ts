import { relativeUnder, type ReportEvent, type TaskRef, toError } from '@trellis/core/protocol';
import { BatchWindow, type LogChunk, type NodeSnapshot, type RunOutputs, type RunReporter, type RunSnapshot } from '@trellis/engine';
import { GrpcStatus, grpcCode, type CoordinatorClient } from '../grpc/client.js';
import type { Logger } from '../logging.js';
import { Backoff, sleep } from './backoff.js';

const MAX_BATCH_EVENTS = 256;
const MAX_BATCH_BYTES = 1 << 20;
const MAX_MERGED_CHUNK = 256 * 1024;
/**
 * How long the first report of a burst waits for the rest: a short step's start, output and
 * end then travel in one call instead of three. The run's end never waits for it (settled()
 * ends it); timestamps inside reports are unaffected. As the coordinator's own reporter's
 * window (persisting-reporter.ts), long enough to cover a short run on a busy host.
 */
const BATCH_WINDOW_MS = 150;

/** A path under the attempt's log directory, relative to it (''. when it lies elsewhere). */
function relativeTo(logDir: string, path: string): string {
  if (path === '') return '';
  return relativeUnder(logDir, path) ?? '';
}

function relativeNode(logDir: string, node: NodeSnapshot): NodeSnapshot {
  return { ...node, stdout: relativeTo(logDir, node.stdout), stderr: relativeTo(logDir, node.stderr) };
}

/**
 * The engine's reports for one attempt, numbered and held until the coordinator confirms
 * them. One Report call is in flight at a time; while the coordinator is away the events
 * wait (a newer status replaces an unsent older one; adjacent log chunks merge) and are
 * sent again when it answers. A `stale` answer means the attempt was taken away: the
 * worker stops the run and drops what it holds.
 */
export class ReportBuffer implements RunReporter {
  private pending: ReportEvent[] = [];
  private seq = 0;
  private sending: Promise<void> | undefined;
  private stale = false;
  private closed = false;
  private readonly window: BatchWindow;

  constructor(
    private readonly client: CoordinatorClient,
    private readonly workerId: string,
    private readonly ref: TaskRef,
    private readonly logDir: string,
    private readonly logger: Logger,
    private readonly onStale: () => void,
    /** How long a burst's first report waits for the rest (tests make it long, to see it cut short). */
    batchWindowMs = BATCH_WINDOW_MS,
  ) {
    this.window = new BatchWindow(batchWindowMs);
  }

  onStatus(snapshot: RunSnapshot): void {
    const placed: RunSnapshot = {
      ...snapshot,
      log: relativeTo(this.logDir, snapshot.log),
      nodes: snapshot.nodes.map((n) => relativeNode(this.logDir, n)),
      handlers: Object.fromEntries(Object.entries(snapshot.handlers).map(([k, n]) => [k, relativeNode(this.logDir, n)])),
    };
    const statusJson = JSON.stringify(placed);
    const last = this.pending.at(-1);
    // Snapshots are complete: an unsent one is simply replaced (its number stays, so none is skipped).
    if (last?.body === 'statusJson' && !this.inFlight(last)) last.statusJson = statusJson;
    else this.push({ seq: 0, body: 'statusJson', statusJson });
  }

  onLog(chunk: LogChunk): void {
    const stream = relativeTo(this.logDir, chunk.path);
    if (stream === '') return;
    const last = this.pending.at(-1);
    const tail = last?.body === 'log' && !this.inFlight(last) ? (last.log ?? undefined) : undefined;
    if (tail !== undefined && tail.stream === stream && tail.offset + tail.data.length === chunk.offset && tail.data.length + chunk.data.length <= MAX_MERGED_CHUNK) {
      tail.data = Buffer.concat([tail.data, chunk.data]);
      return;
    }
    this.push({ seq: 0, body: 'log', log: { stream, offset: chunk.offset, data: Buffer.from(chunk.data) } });
  }

  onOutputs(outputs: RunOutputs): void {
    // No outputs, nothing to store: the coordinator answers a run without them with empty metadata.
    if (Object.keys(outputs.outputs).length === 0) return;
    this.push({ seq: 0, body: 'outputsJson', outputsJson: JSON.stringify(outputs) });
  }

  /**
   * Resolves when the coordinator holds everything reported so far (or the attempt went stale).
   * Called once the run is over: a batch window still open is cut short, and later reports go at once.
   */
  async settled(): Promise<void> {
    this.window.end();
    while (this.sending !== undefined) await this.sending;
  }

  /** Gives up sending (shutdown after the grace period). */
  close(): void {
    this.closed = true;
  }

  get isStale(): boolean {
    return this.stale;
  }

  private inFlightUpTo = 0;

  private inFlight(event: ReportEvent): boolean {
    return event.seq <= this.inFlightUpTo;
  }

  private push(event: ReportEvent): void {
    if (this.stale) return;
    this.seq += 1;
    event.seq = this.seq;
    this.pending.push(event);
    this.sending ??= this.send();
  }

  private batch(): ReportEvent[] {
    const out: ReportEvent[] = [];
    let bytes = 0;
    for (const event of this.pending) {
      const size = (event.log?.data.length ?? 0) + (event.statusJson?.length ?? 0) + (event.outputsJson?.length ?? 0);
      if (out.length > 0 && (out.length >= MAX_BATCH_EVENTS || bytes + size > MAX_BATCH_BYTES)) break;
      out.push(event);
      bytes += size;
    }
    return out;
  }

  /**
   * Sends until nothing is pending. `sending` is cleared in the same turn as the loop's last look
   * at `pending`, by the `finally` here: cleared a microtask later (as a `.finally` on the caller's
   * side did), a report pushed in between found a send still set, started none, and waited for
   * the next report.
   */
  private async send(): Promise<void> {
    const backoff = new Backoff();
    try {
      await this.window.wait();
      while (this.pending.length > 0 && !this.stale && !this.closed) {
        const events = this.batch();
        this.inFlightUpTo = events.at(-1)?.seq ?? 0;
        try {
          const answer = await this.client.request('Report', { workerId: this.workerId, ref: this.ref, events }, 15_000);
          backoff.reset();
          if (answer.stale) {
            this.stale = true;
            this.pending = [];
            this.logger.warn('the coordinator no longer owns this attempt to us; stopping it', { dagName: this.ref.dagName, dagRunId: this.ref.dagRunId, attemptId: this.ref.attemptId });
            this.onStale();
            break;
          }
          this.pending = this.pending.filter((e) => e.seq > answer.appliedSeq);
        } catch (error) {
          if (grpcCode(error) === GrpcStatus.INVALID_ARGUMENT) {
            // Resending the same bytes cannot help; a later snapshot (each is complete) still gets through.
            this.pending = this.pending.filter((e) => e.seq > this.inFlightUpTo);
            this.logger.error('the coordinator refused a report batch as malformed; dropping it', { dagRunId: this.ref.dagRunId, events: events.length, error: toError(error).message });
            continue;
          }
          const wait = backoff.next();
          this.logger.debug('report not delivered; will resend', { dagRunId: this.ref.dagRunId, waitMs: Math.round(wait), error: toError(error).message });
          await sleep(wait);
        } finally {
          this.inFlightUpTo = 0;
        }
      }
    } finally {
      this.sending = undefined;
    }
  }
}
