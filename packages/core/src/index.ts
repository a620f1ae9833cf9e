export * from './model/dag.js';
export * from './status/index.js';
export * from './schedule/index.js';
export * from './names/index.js';
export * from './params/index.js';
export * from './expand/index.js';
export { loadDag, parseBaseConfig, MAX_SPEC_BYTES, type BaseConfig, type LoadDagOptions } from './spec/load.js';
export { parseDuration } from './spec/duration.js';
export * from './detail/index.js';
