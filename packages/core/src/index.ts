export * from './model/dag.js';
export * from './status/index.js';
