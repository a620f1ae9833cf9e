import { z } from 'zod';
import { NO_CONTENT, remoteNodeQuery, type AnyRoute } from './routes.js';

type JsonSchema = Record<string, unknown>;

/** The contract's error body, `Error` in the document's components. */
export const errorBodySchema = z
  .object({
    code: z.enum(['bad_request', 'not_found', 'internal_error', 'unauthorized', 'forbidden', 'already_exists', 'max_run_reached', 'not_running', 'already_running', 'timeout', 'service_unavailable', 'too_many_requests']),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Error' });

/** The served document itself, as far as a client reads it. */
export const openApiDocumentSchema = z.object({
  openapi: z.literal('3.0.0'),
  info: z.object({ title: z.string(), version: z.string() }),
  servers: z.array(z.object({ url: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  components: z.object({ schemas: z.record(z.string(), z.unknown()), securitySchemes: z.record(z.string(), z.unknown()) }),
});

/** How callers authenticate (contract: Authentication); which ones a deployment accepts depends on `auth.mode`. */
const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token from POST /auth/login or /auth/setup (auth.mode builtin)' },
  apiKey: { type: 'http', scheme: 'bearer', description: 'An API key, `svc_...` (auth.mode builtin)' },
  basicAuth: { type: 'http', scheme: 'basic', description: 'Username and password (auth.mode basic, or a built-in user)' },
  webhookToken: { type: 'http', scheme: 'bearer', description: 'A webhook token, `svc_wh_...`: only POST /webhooks/{fileName}' },
};

/**
 * What an operation needs: public ones nothing; webhook calls their token; the rest any
 * credential, whose role must grant `x-permission` (auth.mode none accepts every call).
 */
function securityOf(route: AnyRoute): Array<Record<string, string[]>> {
  if (route.permission === 'public') return [];
  if (route.permission === 'webhook') return [{ webhookToken: [] }];
  return [{ bearerAuth: [] }, { apiKey: [] }, { basicAuth: [] }];
}

const statusText: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  302: 'Found (redirect)',
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  408: 'Timeout',
  409: 'Conflict',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Service unavailable',
};

/** Schemas named with `.meta({ id })` become `components.schemas` entries, referenced by `$ref`. */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly texts = new Map<string, string>();

  toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as JsonSchema;
    delete json.$schema;
    const definitions = (json.definitions ?? {}) as Record<string, JsonSchema>;
    delete json.definitions;
    for (const [id, definition] of Object.entries(definitions)) this.add(id, rewriteRefs(definition) as JsonSchema);
    return rewriteRefs(json) as JsonSchema;
  }

  private add(id: string, definition: JsonSchema): void {
    const text = JSON.stringify(definition);
    const known = this.texts.get(id);
    // One name, two shapes (a schema used as input and as output, or two schemas given one id): refuse.
    if (known !== undefined && known !== text) throw new Error(`schema ${id} has two different JSON forms in the OpenAPI document`);
    this.texts.set(id, text);
    this.schemas[id] = definition;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key, key === '$ref' && typeof inner === 'string' ? inner.replace('#/definitions/', '#/components/schemas/') : rewriteRefs(inner)]),
  );
}

function parametersOf(route: AnyRoute, components: Components): JsonSchema[] {
  const parameters: JsonSchema[] = [];
  const add = (schema: z.ZodType | undefined, where: 'path' | 'query' | 'header'): void => {
    if (schema === undefined) return;
    const json = components.toSchema(schema, 'input');
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, propSchema] of Object.entries(properties)) {
      const { description, ...rest } = propSchema;
      parameters.push({ name, in: where, required: where === 'path' || required.has(name), ...(description !== undefined ? { description } : {}), schema: rest });
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  add(route.headers, 'header');
  // Every operation takes remoteNode (checked before the route's own query): declared once, here.
  if (parameters.some((p) => p.name === 'remoteNode')) throw new Error(`${route.operationId} declares remoteNode itself; every route takes it already`);
  add(remoteNodeQuery, 'query');
  return parameters;
}

function successResponse(route: AnyRoute, components: Components): JsonSchema {
  const status = route.successStatus ?? 200;
  // The type requires it; a route built around the type (a cast, plain JavaScript) still must not pass untyped.
  if ((route.response as z.ZodType | undefined) === undefined) throw new Error(`${route.operationId} declares no response schema`);
  // 204 and redirects have no body.
  const bodiless = status === 204 || (status >= 300 && status < 400);
  if (bodiless !== (route.response === NO_CONTENT)) throw new Error(`${route.operationId}: a 204 or redirect route, and only those, declare NO_CONTENT as their response`);
  const response: JsonSchema = { description: statusText[status] ?? 'OK' };
  if (status >= 300 && status < 400) response.headers = { Location: { description: 'where to go next', schema: { type: 'string' } } };
  if (!bodiless) response.content = { [route.produces ?? 'application/json']: { schema: components.toSchema(route.response, 'output') } };
  return response;
}

function responsesOf(route: AnyRoute, components: Components): JsonSchema {
  const responses: JsonSchema = { [String(route.successStatus ?? 200)]: successResponse(route, components) };
  const denials = route.permission === 'public' ? [] : route.permission === 'authenticated' || route.permission === 'webhook' ? [401] : [401, 403];
  const errorStatuses = [400, ...denials, ...(route.errors ?? []), ...Object.keys(route.errorBodies ?? {}).map(Number), 500];
  for (const status of [...new Set(errorStatuses)].sort()) {
    const body = route.errorBodies?.[status] ?? errorBodySchema;
    responses[String(status)] = { description: statusText[status] ?? 'Error', content: { 'application/json': { schema: components.toSchema(body, 'output') } } };
  }
  return responses;
}

/** A body is required only when an empty one would be refused, as the route's own validation decides. */
function requestBodyOf(route: AnyRoute, components: Components): JsonSchema | undefined {
  if (route.body === undefined) return undefined;
  return { required: !route.body.safeParse({}).success, content: { 'application/json': { schema: components.toSchema(route.body, 'input') } } };
}

/** The OpenAPI 3.0.0 document, generated from the same route table that validates requests and declares responses. */
export function buildOpenApiDocument(routes: AnyRoute[], options: { apiBasePath: string; version: string }): JsonSchema {
  const components = new Components();
  components.toSchema(errorBodySchema, 'output');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.deprecated === true ? { deprecated: true } : {}),
      parameters: parametersOf(route, components),
      responses: responsesOf(route, components),
      security: securityOf(route),
      'x-permission': route.permission,
    };
    const requestBody = requestBodyOf(route, components);
    if (requestBody !== undefined) operation.requestBody = requestBody;
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Trellis API', version: options.version },
    servers: [{ url: options.apiBasePath }],
    paths,
    components: { schemas: components.schemas, securitySchemes: SECURITY_SCHEMES },
  };
}
