// `@trellis/core/protocol`: what a process that speaks the worker protocol needs before it
// parses a DAG (messages, identities, statuses, names, errors). It loads neither yaml nor zod
// nor the DAG schemas built from them, which the main entry does: an idle worker imports this
// one and holds some 20 MB less. The modules are the main entry's, so classes stay one.
export type * from '../model/dag.js';
export * from '../model/run-identity.js';
export * from '../status/index.js';
export * from '../names/index.js';
export * from './worker-protocol.js';
export * from './messages.js';
export * from '../errors/index.js';
