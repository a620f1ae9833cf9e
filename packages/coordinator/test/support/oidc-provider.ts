import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

/** What the provider says about an account: any claims beside `sub`. */
export type AccountClaims = Record<string, unknown>;

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by id; change them between logins to change what the provider says. */
  accounts: Map<string, AccountClaims>;
  stop(): Promise<void>;
}

/** A free loopback port, for servers whose URL must be known before they start. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * A real OpenID provider (`oidc-provider`) on a loopback port: in-memory storage, one
 * confidential client allowed to redirect to `redirectUris`, its development login and consent
 * pages (which accept any account id the test submits), and a `groups` claim in the profile scope.
 */
export async function startTestProvider(redirectUris: string[]): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, AccountClaims>();
  const clientId = 'trellis';
  const clientSecret = 'trellis-client-secret-for-tests';
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['test-provider-cookie-key'] },
    jwks: { keys: [{ ...signingKey, kid: 'test', use: 'sig', alg: 'RS256' }] },
    findAccount: (_ctx: KoaContextWithOIDC, id: string) => {
      const claims = accounts.get(id);
      return claims === undefined ? undefined : { accountId: id, claims: () => ({ sub: id, ...claims }) };
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => void handle(req, res));
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A browser's cookies, by name (the provider's and the coordinator's are told apart by name). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface BrowserLogin {
  status: number;
  json: Record<string, unknown>;
  /** The callback URL the provider sent the browser to. */
  callbackUrl: string;
}

/**
 * Drives a single sign-on as a browser would, over real HTTP with redirects followed by hand:
 * the service's login redirect, the provider's login page (submitting `accountId`) and consent
 * page, then the callback, whose answer is returned. `editCallback` may tamper with the callback URL.
 */
export async function browserLogin(apiUrl: string, accountId: string, editCallback: (url: URL) => URL = (url) => url): Promise<BrowserLogin> {
  const jar = new CookieJar();
  const start = await fetch(`${apiUrl}/auth/oidc/login`, { redirect: 'manual' });
  if (start.status !== 302) throw new Error(`login answered ${start.status}: ${await start.text()}`);
  jar.take(start);
  let location = new URL(start.headers.get('location') ?? '');
  const providerOrigin = location.origin;
  for (let hop = 0; hop < 20; hop += 1) {
    if (location.origin !== providerOrigin) {
      const callback = editCallback(location);
      const res = await fetch(callback, { redirect: 'manual', headers: { cookie: jar.header() } });
      const text = await res.text();
      return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), callbackUrl: callback.href };
    }
    const res = await fetch(location, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(res);
    let next = res;
    if (res.status === 200) {
      // A login or consent page: submit its form as the user would.
      const page = await res.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      if (prompt === undefined) throw new Error(`unexpected provider page at ${location.href}: ${page.slice(0, 300)}`);
      const form = new URLSearchParams(prompt === 'login' ? { prompt, login: accountId } : { prompt });
      next = await fetch(location, { method: 'POST', redirect: 'manual', body: form, headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' } });
      jar.take(next);
    }
    const to = next.headers.get('location');
    if (next.status < 300 || next.status >= 400 || to === null) throw new Error(`provider answered ${next.status} at ${location.href}: ${await next.text()}`);
    location = new URL(to, location);
  }
  throw new Error('too many redirects');
}
