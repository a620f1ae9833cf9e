import { z } from 'zod';
import type { AnyRoute } from './routes.js';

type JsonSchema = Record<string, unknown>;

const errorBodySchema: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: {
      type: 'string',
      enum: ['bad_request', 'not_found', 'internal_error', 'unauthorized', 'forbidden', 'already_exists', 'max_run_reached', 'not_running', 'already_running', 'timeout', 'service_unavailable'],
    },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
};

const statusText: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  408: 'Timeout',
  409: 'Conflict',
  500: 'Internal error',
  503: 'Service unavailable',
};

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

function parametersOf(route: AnyRoute): JsonSchema[] {
  const parameters: JsonSchema[] = [];
  const add = (schema: z.ZodType | undefined, where: 'path' | 'query'): void => {
    if (schema === undefined) return;
    const json = toSchema(schema, 'input');
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, propSchema] of Object.entries(properties)) {
      parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: propSchema });
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  return parameters;
}

function responsesOf(route: AnyRoute): JsonSchema {
  const success = route.successStatus ?? 200;
  const responses: JsonSchema = {};
  const successBody: JsonSchema = { description: statusText[success] ?? 'OK' };
  if (success !== 204) {
    const mediaType = route.produces ?? 'application/json';
    const schema = route.response !== undefined ? toSchema(route.response, 'output') : { type: 'object' };
    successBody.content = { [mediaType]: { schema: mediaType === 'application/json' ? schema : { type: 'string' } } };
  }
  responses[String(success)] = successBody;
  for (const status of [...new Set([400, ...(route.errors ?? []), 500])].sort()) {
    responses[String(status)] = {
      description: statusText[status] ?? 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return responses;
}

/** The OpenAPI 3.0.0 document, generated from the same route table that validates requests. */
export function buildOpenApiDocument(routes: AnyRoute[], options: { apiBasePath: string; version: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters: parametersOf(route),
      responses: responsesOf(route),
    };
    if (route.body !== undefined) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: toSchema(route.body, 'input') } } };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Trellis API', version: options.version },
    servers: [{ url: options.apiBasePath }],
    paths,
    components: { schemas: { Error: errorBodySchema } },
  };
}
