import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminalRunStatus, toError } from '@trellis/core';
import { appendLogChunks, storedLogSize, type Db, type LogStreamRef, type NewLogChunk, type RunRecord } from '@trellis/store';
import type { Logger } from '../logging/logger.js';
import { attemptLogDir } from './log-streams.js';

/** Bytes read from a file at a time, and stored in one transaction. */
const READ_BYTES = 1024 * 1024;
const BYTES_PER_TRANSACTION = 4 * READ_BYTES;
/** Streams remembered as checked; the oldest forgotten first (checking one again costs a query and a stat). */
const MAX_CHECKED = 10_000;

/**
 * Logs of runs recorded before logs were stored in the database exist only as files under the
 * log directory of the coordinator that ran them. The first read of such a stream on that
 * coordinator imports the file (then every coordinator serves it from the database), so an
 * upgrade keeps old logs. Only ended runs are looked at: a running one's writer stores its log.
 * The import goes from the stored end, in transactions of a few MiB, so one cut short (the
 * coordinator stopped) goes on at the next read; bytes stored twice are kept once (chunks are
 * keyed by byte offset), so two readers importing at once do no harm.
 */
export class LogFileImport {
  private readonly checked = new Set<string>();
  private readonly going = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /**
   * Imports the stream's file when it holds more than the database; once per stream and
   * coordinator. A failed import is logged and tried again at the next read; this one serves
   * what the database holds.
   */
  async ensure(run: Pick<RunRecord, 'status' | 'logFile'>, ref: LogStreamRef): Promise<void> {
    if (!isTerminalRunStatus(run.status)) return;
    const key = `${ref.runId}\u0000${ref.attemptId}\u0000${ref.stream}`;
    if (this.checked.has(key)) return;
    let going = this.going.get(key);
    if (going === undefined) {
      going = this.importFile(join(attemptLogDir(run), ref.stream), ref).finally(() => this.going.delete(key));
      this.going.set(key, going);
    }
    if (!(await going.then(() => true, () => false))) return;
    if (this.checked.size >= MAX_CHECKED) this.checked.delete(this.checked.values().next().value as string);
    this.checked.add(key);
  }

  private async importFile(path: string, ref: LogStreamRef): Promise<void> {
    const file = await open(path, 'r').catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    });
    if (file === undefined) return;
    try {
      const { size } = await file.stat();
      const from = (await storedLogSize(this.db, ref)) ?? 0;
      if (size <= from) return;
      for (let at = from; at < size; at += BYTES_PER_TRANSACTION) await this.importRange(file, ref, at, Math.min(size, at + BYTES_PER_TRANSACTION));
      this.logger.info('imported a log file into the database', { runId: ref.runId, stream: ref.stream, path, bytes: size - from });
    } catch (error) {
      this.logger.error('could not import a log file into the database; trying again at the next read', { runId: ref.runId, stream: ref.stream, path, error: toError(error) });
      throw error;
    } finally {
      await file.close();
    }
  }

  private async importRange(file: Awaited<ReturnType<typeof open>>, ref: LogStreamRef, from: number, to: number): Promise<void> {
    const chunks: NewLogChunk[] = [];
    for (let at = from; at < to; ) {
      const data = Buffer.alloc(Math.min(READ_BYTES, to - at));
      const { bytesRead } = await file.read(data, 0, data.length, at);
      if (bytesRead === 0) break;
      chunks.push({ stream: ref.stream, offset: at, data: data.subarray(0, bytesRead) });
      at += bytesRead;
    }
    await appendLogChunks(this.db, ref.runId, ref.attemptId, chunks);
  }
}
