export * from './types.js';
export { MemoryReporter } from './reporting/memory-reporter.js';
export { runDag, ApprovalError, type RunHandle } from './run/runner.js';
export { settlesWithin } from './run/settles-within.js';
export { MASK, SecretMasker } from './logs/secret-masker.js';
export { readDotenvFiles } from './run/environment.js';
export type { StepExecutor, StepExecutionContext, StepExecutionResult } from './executors/types.js';
export { ProcessSpawner } from './executors/spawner/process-spawner.js';
export type { ProcessLauncher } from './executors/process-group.js';
