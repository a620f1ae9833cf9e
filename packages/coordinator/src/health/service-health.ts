import type { DatabaseProbe } from './database-probe.js';

export interface ServiceHealthDeps {
  version: string;
  startedAt: Date;
  database: DatabaseProbe;
}

/** The service is healthy while its database answers; the report says so with its version and uptime. */
export class ServiceHealth {
  constructor(private readonly deps: ServiceHealthDeps) {}

  async report() {
    const database = await this.deps.database.check();
    const report = {
      status: database.ok ? ('healthy' as const) : ('unhealthy' as const),
      version: this.deps.version,
      uptime: Math.floor((Date.now() - this.deps.startedAt.getTime()) / 1000),
      timestamp: new Date().toISOString(),
    };
    return database.ok ? { healthy: true as const, report } : { healthy: false as const, report: { ...report, error: database.error } };
  }
}
