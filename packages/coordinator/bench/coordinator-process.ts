// One bench coordinator in a process of its own (see bench-processes.ts): started from the
// options in argv[2], it sends `ready` with its addresses, answers `cpu` with the CPU time it
// has used, and closes on `stop`.
import { toError } from '@trellis/core';
import { openDatabase } from '@trellis/store';
import { createSilentLogger, startCoordinator } from '@trellis/coordinator';
import { benchServerConfig, type ChildMessage, type CoordinatorProcessOptions } from './bench-processes.js';

const send = (message: ChildMessage): void => void process.send?.(message);
const options = JSON.parse(process.argv[2] ?? '{}') as CoordinatorProcessOptions;

try {
  const db = await openDatabase({ databaseUrl: options.databaseUrl, schema: options.schema });
  const coordinator = await startCoordinator(benchServerConfig(options.dir, options.id), createSilentLogger(), { watch: false, db });
  process.on('message', (message: { type: string }) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', micros: user + system });
    } else if (message.type === 'stop') {
      void coordinator
        .close()
        .then(() => db.close())
        .finally(() => process.disconnect());
    }
  });
  send({ type: 'ready', apiUrl: coordinator.apiUrl, grpcAddress: coordinator.grpcAddress ?? '' });
} catch (error) {
  send({ type: 'failed', message: toError(error).stack ?? String(error) });
  process.disconnect();
}
