import { ServiceUnavailableError } from '@trellis/core';

/** Another live process holds the embedded database: it cannot be opened until that one stops. */
export class DataDirInUseError extends ServiceUnavailableError {
  constructor(dataDir: string, pid: number) {
    super(`data directory ${dataDir} is in use by process ${pid}; stop it, or give this process another --data-dir or a DATABASE_URL`);
  }
}
