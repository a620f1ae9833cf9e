import { ServiceUnavailableError } from '@trellis/core';
import type { WorkerRegistry, WorkerView } from './worker-registry.js';

/** The remote workers as an operator sees them; there are none to see without the worker gRPC server. */
export class ConnectedWorkers {
  constructor(
    private readonly registry: WorkerRegistry,
    /** The worker gRPC server is listening. */
    private readonly grpcRunning: boolean,
  ) {}

  /** Registered workers with their health; refused while workers cannot connect to this coordinator. */
  async list(): Promise<WorkerView[]> {
    if (!this.grpcRunning) throw new ServiceUnavailableError('the worker gRPC server is not running on this coordinator');
    return this.registry.list();
  }
}
