export * from './errors/api-errors.js';
export { toError } from './errors/normalize.js';
export * from './config/schema.js';
export * from './config/load.js';
export * from './logging/logger.js';
export * from './http/routes.js';
export { buildOpenApiDocument } from './http/openapi.js';
export { errorHandler, notFoundHandler } from './http/error-handler.js';
export { createHttpApp, apiMountPath, type HttpAppOptions } from './http/app.js';
