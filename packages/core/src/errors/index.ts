export { TrellisError, type ErrorCode, type ErrorKind } from './trellis-error.js';
export * from './domain-errors.js';
export { toError } from './to-error.js';
export { errorLogFields, safeLogInfo, withErrorLogFields, type ErrorLogFields, type ErrorLogOptions, type LogInfo } from './log-fields.js';
