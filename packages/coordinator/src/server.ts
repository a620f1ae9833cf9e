import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApp, apiMountPath } from './http/app.js';
import { DagFiles } from './definitions/dag-files.js';
import { DagIndex } from './definitions/dag-index.js';
import { dagRoutes } from './api/dags.routes.js';
import { systemRoutes } from './api/system.routes.js';
import type { ServerConfig } from './config/load.js';
import type { Logger } from './logging/logger.js';

export const VERSION = '0.1.0';

export interface Coordinator {
  /** Base URL of the API, e.g. http://127.0.0.1:8080/api/v1. */
  apiUrl: string;
  index: DagIndex;
  close(): Promise<void>;
}

/** Starts the coordinator: indexes the DAGs directory, then serves the API. */
export async function startCoordinator(config: ServerConfig, logger: Logger, options: { watch?: boolean } = {}): Promise<Coordinator> {
  const files = new DagFiles(config.dagsDir);
  const index = new DagIndex(files, logger, config.baseConfig);
  await index.start({ watch: options.watch ?? true });
  const routes = [...systemRoutes({ version: VERSION, startedAt: new Date() }), ...dagRoutes({ files, index, timezone: config.timezone })];
  const app = createHttpApp({ routes, logger, basePath: config.basePath, apiBasePath: config.apiBasePath, version: VERSION });
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.port, config.host);
    listening.once('listening', () => resolve(listening));
    listening.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const apiUrl = `http://${host}:${port}${apiMountPath(config)}`;
  logger.info('coordinator listening', { apiUrl, dagsDir: config.dagsDir, dataDir: config.dataDir });
  return {
    apiUrl,
    index,
    close: async () => {
      index.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      logger.info('coordinator stopped');
    },
  };
}
