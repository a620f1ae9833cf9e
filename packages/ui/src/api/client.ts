import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type Role = Schemas['User']['role'];

/** Where the coordinator mounted the API; it writes this into the page (the dev server does not). */
export const apiPath = document.querySelector('meta[name="trellis-api"]')?.getAttribute('content') ?? '/api/v1';
/** The base path the app is served under ('' at the root), from the `<base href>` the coordinator writes. */
export const basePath = new URL(document.baseURI).pathname.replace(/\/+$/, '');

const TOKEN_KEY = 'trellis.token';
let token: string | null = localStorage.getItem(TOKEN_KEY);

export function setToken(value: string | null): void {
  token = value;
  if (value === null) localStorage.removeItem(TOKEN_KEY);
  else localStorage.setItem(TOKEN_KEY, value);
}

export function authorizationHeader(): Record<string, string> {
  return token !== null ? { authorization: `Bearer ${token}` } : {};
}

export const api = createClient<paths>({ baseUrl: new URL(apiPath, window.location.origin).toString() });
api.use({
  onRequest({ request }) {
    for (const [name, value] of Object.entries(authorizationHeader())) request.headers.set(name, value);
    return request;
  },
  onResponse({ response }) {
    // A token that expired or was revoked: the app goes back to the login page.
    if (response.status === 401 && token !== null) window.dispatchEvent(new Event('trellis:unauthorized'));
    return response;
  },
});

/** An API answer that was not a success, with the contract's error code and message. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
    this.name = 'ApiError';
  }
}

export function toApiError(status: number, body: unknown): ApiError {
  const shaped = typeof body === 'object' && body !== null ? (body as { code?: unknown; message?: unknown }) : {};
  const code = typeof shaped.code === 'string' ? shaped.code : 'http_error';
  const message = typeof shaped.message === 'string' ? shaped.message : `the server answered ${status}`;
  return new ApiError(status, code, message);
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body of a successful answer; an API error becomes an ApiError carrying the server's message. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw toApiError(response.status, error);
  return data as T;
}
