import { z } from 'zod';
import { PROFILE_NAME } from '@trellis/core';
import { ROLES } from '../auth/principal.js';

const port = z.number().int().min(0).max(65535);
const positiveInt = z.number().int().min(1);

/** A key-encryption key of the secret store: 32 random bytes, base64 (`openssl rand -base64 32`). */
export const secretKeySchema = z.string().trim().refine((value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32, 'must be 32 bytes in base64 (openssl rand -base64 32)');

export const queueConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'queue names use letters, digits, _ . -'),
  maxConcurrency: positiveInt,
});

/**
 * Single sign-on through an OpenID Connect provider (authorization code with PKCE), mode builtin
 * only: the provider vouches for the user, the coordinator issues its usual login token. Only in
 * the config file (a nested section has no `SVC_*` variables).
 */
export const oidcConfigSchema = z.strictObject({
  /** The provider's issuer URL; its discovery document is read from `/.well-known/openid-configuration` under it. */
  issuer: z.url({ protocol: /^https?$/ }),
  clientId: z.string().min(1),
  /** Absent for a public client (PKCE alone). */
  clientSecret: z.string().min(1).optional(),
  /** This service's callback as registered with the provider: `<public URL><basePath><apiBasePath>/auth/oidc/callback`. */
  redirectUrl: z.url({ protocol: /^https?$/ }),
  scopes: z.array(z.string().min(1)).default(['openid', 'profile', 'email']),
  /** The claim that names the user here (first login); `sub` when the provider sends none. */
  usernameClaim: z.string().min(1).default('preferred_username'),
  /** A claim holding a group name or a list of them (`groups`), mapped to roles by `roleMap`. */
  roleClaim: z.string().min(1).optional(),
  /** Claim value -> role; a user in several mapped groups gets the strongest role. */
  roleMap: z.record(z.string(), z.enum(ROLES)).default({}),
  /** The role of users no `roleMap` entry matches; absent: such users are refused. */
  defaultRole: z.enum(ROLES).optional(),
  /** Create unknown users at their first login; off: only users who logged in before are let in. */
  autoProvision: z.boolean().default(false),
}).superRefine((oidc, ctx) => {
  const issuer = new URL(oidc.issuer);
  if (issuer.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname)) ctx.addIssue({ code: 'custom', path: ['issuer'], message: 'must use https (plain http only on loopback)' });
  if (oidc.roleClaim === undefined && oidc.defaultRole === undefined) ctx.addIssue({ code: 'custom', path: ['defaultRole'], message: 'set roleClaim with roleMap, or defaultRole: every user needs a role' });
});

export type OidcConfig = z.output<typeof oidcConfigSchema>;

/**
 * Who may call the API. `none` needs no credentials and is refused beyond loopback unless
 * `allowUnauthenticated` says the operator means it; `basic` is one configured user (admin);
 * `builtin` keeps users in the database. Keys are flat so each has one `SVC_AUTH_*` variable.
 */
export const authConfigSchema = z
  .strictObject({
    mode: z.enum(['none', 'basic', 'builtin']).default('none'),
    /** Accept mode `none` on an address beyond loopback: anyone who reaches the port may run commands. */
    allowUnauthenticated: z.boolean().default(false),
    /** Mode basic: the one user's name, and its password as a bcrypt hash, in clear, or in a file (first line). */
    basicUsername: z.string().min(1).max(64).optional(),
    basicPasswordHash: z.string().regex(/^\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}$/, 'must be a bcrypt hash ($2b$12$...)').optional(),
    basicPassword: z.string().min(1).optional(),
    basicPasswordFile: z.string().min(1).optional(),
    /** Lifetime of tokens from login and setup. */
    tokenTtlSec: z.number().int().min(60).max(31_536_000).default(86_400),
    /** Key that signs login tokens (HS256, at least 32 characters); default: generated once and kept in the database, shared by every coordinator. */
    tokenSecret: z.string().min(32, 'must be at least 32 characters').optional(),
    /** PEM public key that verifies the Pro license (RS256/ES256), inline or in a file. */
    licensePublicKey: z.string().min(1).optional(),
    licensePublicKeyFile: z.string().min(1).optional(),
    /** The Pro license: a signed token, inline or in a file. */
    license: z.string().min(1).optional(),
    licenseFile: z.string().min(1).optional(),
    oidc: oidcConfigSchema.optional(),
  })
  .superRefine((auth, ctx) => {
    if (auth.oidc !== undefined && auth.mode !== 'builtin') ctx.addIssue({ code: 'custom', path: ['oidc'], message: 'single sign-on needs auth.mode builtin' });
    if (auth.mode !== 'basic') return;
    if (auth.basicUsername === undefined) ctx.addIssue({ code: 'custom', path: ['basicUsername'], message: 'required with auth.mode basic (SVC_AUTH_BASIC_USERNAME)' });
    const given = [auth.basicPasswordHash, auth.basicPassword, auth.basicPasswordFile].filter((v) => v !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', path: ['basicPasswordHash'], message: 'auth.mode basic needs exactly one of basicPasswordHash, basicPassword, basicPasswordFile' });
  });

/**
 * The coordinator's configuration: file keys are these camelCase names; every key also has an
 * `SVC_*` environment variable (see `ENV_KEYS`). Defaults are stated here, where they are declared.
 */
export const serverConfigSchema = z.strictObject({
  /** Address the HTTP server binds to. */
  host: z.string().min(1).default('127.0.0.1'),
  /** HTTP port; 0 picks a free port (tests). */
  port: port.default(8080),
  /** Service base path for mounted deployments ('' = root); the API lives under basePath + apiBasePath. */
  basePath: z.string().regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or like /a/b').default(''),
  apiBasePath: z.string().regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'must look like /api/v1').default('/api/v1'),
  /**
   * The built web UI served at basePath (its index.html for every page path, so deep links load).
   * Default: packages/ui/dist of this installation; nothing is served while it holds no index.html.
   */
  uiDir: z.string().min(1).optional(),
  /** Embedded database, locks and default log location. */
  dataDir: z.string().min(1).default('./data'),
  dagsDir: z.string().min(1).default('./dags'),
  /** Default: <dataDir>/logs. */
  logDir: z.string().min(1).optional(),
  /** Markdown documents; empty disables DAG_DOCS_DIR. Default: <dataDir>/docs. */
  docsDir: z.string().optional(),
  /** Base DAG configuration every DAG inherits; default: base.yaml beside the config file, if any. */
  baseConfig: z.string().optional(),
  /** PostgreSQL connection string; absent means embedded PGlite under dataDir. */
  databaseUrl: z.string().url().optional(),
  /** IANA zone for schedules without CRON_TZ; default: the host's zone. */
  timezone: z.string().refine(isValidTimeZone, 'unknown IANA time zone').optional(),
  /** Default for DAGs without hist_retention_days. */
  histRetentionDays: z.number().int().default(30),
  queues: z.array(queueConfigSchema).default([]),
  /** Where runs without worker_selector go. */
  defaultExecutionMode: z.enum(['local', 'distributed']).default('local'),
  envPassthrough: z.array(z.string().min(1)).default([]),
  envPassthroughPrefixes: z.array(z.string().min(1)).default([]),
  /** gRPC server for workers; port 0 picks a free port, -1 disables it. */
  grpcHost: z.string().min(1).default('127.0.0.1'),
  grpcPort: z.number().int().min(-1).max(65535).default(50051),
  /** Shared secret every worker must present. */
  workerToken: z.string().min(1).optional(),
  grpcTlsCert: z.string().optional(),
  grpcTlsKey: z.string().optional(),
  /** CA for verifying worker client certificates; set it to require them. */
  grpcTlsClientCa: z.string().optional(),
  /** A started remote run whose worker is silent this long is failed. */
  workerHeartbeatTimeoutSec: positiveInt.default(15),
  /** A run handed to a worker goes back to the queue when the worker does not confirm it this soon. */
  workerAckTimeoutSec: positiveInt.default(10),
  /**
   * This coordinator's name on a shared database (its executor is worker `local:<id>`); keep it
   * stable across restarts so a restart fails at once the local runs it cut off. Default: host:port.
   */
  coordinatorId: z.string().regex(/^[A-Za-z0-9_.:@-]{1,100}$/, 'letters, digits and _ . : @ -').optional(),
  /** Run the scheduler (one leader among the coordinators on a database). */
  schedulerEnabled: z.boolean().default(true),
  /** The scheduler lease's lifetime: a standby takes over this long after a leader dies. */
  schedulerLeaseTtlMs: z.number().int().min(500).default(5000),
  /** Test clusters only: the scheduler's clock runs this many times faster than real time from the anchor. */
  schedulerClockSpeed: z.number().min(1).max(3600).default(1),
  schedulerClockAnchor: z.iso.datetime({ offset: true }).optional(),
  /**
   * On SIGTERM, running local runs get this long to finish (nothing new starts meanwhile);
   * those still running then are stopped (aborted, with an error that says why).
   */
  shutdownGraceSec: z.number().int().min(0).default(20),
  /**
   * Host names the API answers to besides loopback names, IP literals and \`host\`: a request
   * naming another host is refused (DNS rebinding). \`*\` turns the check off.
   */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** Origins (\`https://ui.example.com\`) besides the service's own whose pages may send state-changing requests. */
  allowedOrigins: z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'an origin: scheme://host[:port]')).default([]),
  /** One info line per HTTP request: method, route, status, duration, request id. */
  accessLog: z.boolean().default(true),
  logLevel: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
  logFormat: z.enum(['json', 'text']).default('json'),
  auth: authConfigSchema.default({ mode: 'none', allowUnauthenticated: false, tokenTtlSec: 86_400 }),
  /**
   * Key-encryption key of runtime-profile secrets (AES-256-GCM): new values are sealed with it.
   * Every coordinator on one database needs the same. Default: none; with the embedded database
   * a key is generated once as <dataDir>/secrets.key (mode 0600); with PostgreSQL secrets are
   * refused until one is set.
   */
  secretsKey: secretKeySchema.optional(),
  /** A file holding the current key on its first line and previous keys on the following ones (instead of secretsKey). */
  secretsKeyFile: z.string().min(1).optional(),
  /** Keys that still open values sealed before a rotation (`trellis secrets rotate-key` re-seals them with the current one). */
  secretsPreviousKeys: z.array(secretKeySchema).default([]),
  /**
   * The runtime profile of runs whose start names none (the effective default profile of every
   * DAG): a schedule entry with `profile` is active only when it names this one. Default: none.
   */
  defaultProfile: z.string().regex(PROFILE_NAME, 'must be a profile name (lowercase letters, digits, ".", "_", "-")').optional(),
  /**
   * The contract's server-level `write_dags` permission: false refuses every API write to DAG
   * definitions and documents, and API-requested sync pulls, whatever the caller's role (the DAGs
   * directory and auto-sync stay the ways in).
   */
  writeDags: z.boolean().default(true),
  /** `/metrics`: answered to anyone (`public`) or only with credentials (`private`). */
  metrics: z.enum(['public', 'private']).default('public'),
});

export type RawServerConfig = z.input<typeof serverConfigSchema>;
export type ParsedServerConfig = z.output<typeof serverConfigSchema>;

export type AuthConfig = z.output<typeof authConfigSchema>;

/** A top-level key, or `auth.<key>` for the auth section. */
export type ConfigKey = keyof RawServerConfig | `auth.${keyof z.input<typeof authConfigSchema>}`;

/** Environment variable -> config key, with how the string is read. One table, also used by tests of deploy files. */
export const ENV_KEYS: Record<string, { key: ConfigKey; kind: 'string' | 'int' | 'bool' | 'list' }> = {
  SVC_HOST: { key: 'host', kind: 'string' },
  SVC_PORT: { key: 'port', kind: 'int' },
  SVC_BASE_PATH: { key: 'basePath', kind: 'string' },
  SVC_API_BASE_PATH: { key: 'apiBasePath', kind: 'string' },
  SVC_DATA_DIR: { key: 'dataDir', kind: 'string' },
  SVC_UI_DIR: { key: 'uiDir', kind: 'string' },
  SVC_DAGS_DIR: { key: 'dagsDir', kind: 'string' },
  SVC_LOG_DIR: { key: 'logDir', kind: 'string' },
  SVC_DOCS_DIR: { key: 'docsDir', kind: 'string' },
  SVC_BASE_CONFIG: { key: 'baseConfig', kind: 'string' },
  SVC_DATABASE_URL: { key: 'databaseUrl', kind: 'string' },
  DATABASE_URL: { key: 'databaseUrl', kind: 'string' },
  SVC_TZ: { key: 'timezone', kind: 'string' },
  SVC_HIST_RETENTION_DAYS: { key: 'histRetentionDays', kind: 'int' },
  SVC_DEFAULT_EXECUTION_MODE: { key: 'defaultExecutionMode', kind: 'string' },
  SVC_ENV_PASSTHROUGH: { key: 'envPassthrough', kind: 'list' },
  SVC_ENV_PASSTHROUGH_PREFIXES: { key: 'envPassthroughPrefixes', kind: 'list' },
  SVC_GRPC_HOST: { key: 'grpcHost', kind: 'string' },
  SVC_GRPC_PORT: { key: 'grpcPort', kind: 'int' },
  SVC_WORKER_TOKEN: { key: 'workerToken', kind: 'string' },
  SVC_GRPC_TLS_CERT: { key: 'grpcTlsCert', kind: 'string' },
  SVC_GRPC_TLS_KEY: { key: 'grpcTlsKey', kind: 'string' },
  SVC_GRPC_TLS_CLIENT_CA: { key: 'grpcTlsClientCa', kind: 'string' },
  SVC_WORKER_HEARTBEAT_TIMEOUT_SEC: { key: 'workerHeartbeatTimeoutSec', kind: 'int' },
  SVC_WORKER_ACK_TIMEOUT_SEC: { key: 'workerAckTimeoutSec', kind: 'int' },
  SVC_COORDINATOR_ID: { key: 'coordinatorId', kind: 'string' },
  SVC_SCHEDULER_LEASE_TTL_MS: { key: 'schedulerLeaseTtlMs', kind: 'int' },
  SVC_SHUTDOWN_GRACE_SEC: { key: 'shutdownGraceSec', kind: 'int' },
  SVC_ALLOWED_HOSTS: { key: 'allowedHosts', kind: 'list' },
  SVC_ALLOWED_ORIGINS: { key: 'allowedOrigins', kind: 'list' },
  SVC_ACCESS_LOG: { key: 'accessLog', kind: 'bool' },
  SVC_LOG_LEVEL: { key: 'logLevel', kind: 'string' },
  SVC_LOG_FORMAT: { key: 'logFormat', kind: 'string' },
  SVC_METRICS: { key: 'metrics', kind: 'string' },
  SVC_WRITE_DAGS: { key: 'writeDags', kind: 'bool' },
  SVC_SECRETS_KEY: { key: 'secretsKey', kind: 'string' },
  SVC_SECRETS_KEY_FILE: { key: 'secretsKeyFile', kind: 'string' },
  SVC_SECRETS_PREVIOUS_KEYS: { key: 'secretsPreviousKeys', kind: 'list' },
  SVC_DEFAULT_PROFILE: { key: 'defaultProfile', kind: 'string' },
  SVC_AUTH_MODE: { key: 'auth.mode', kind: 'string' },
  SVC_AUTH_ALLOW_UNAUTHENTICATED: { key: 'auth.allowUnauthenticated', kind: 'bool' },
  SVC_AUTH_BASIC_USERNAME: { key: 'auth.basicUsername', kind: 'string' },
  SVC_AUTH_BASIC_PASSWORD_HASH: { key: 'auth.basicPasswordHash', kind: 'string' },
  SVC_AUTH_BASIC_PASSWORD: { key: 'auth.basicPassword', kind: 'string' },
  SVC_AUTH_BASIC_PASSWORD_FILE: { key: 'auth.basicPasswordFile', kind: 'string' },
  SVC_AUTH_TOKEN_TTL_SEC: { key: 'auth.tokenTtlSec', kind: 'int' },
  SVC_AUTH_TOKEN_SECRET: { key: 'auth.tokenSecret', kind: 'string' },
  SVC_AUTH_LICENSE_PUBLIC_KEY: { key: 'auth.licensePublicKey', kind: 'string' },
  SVC_AUTH_LICENSE_PUBLIC_KEY_FILE: { key: 'auth.licensePublicKeyFile', kind: 'string' },
  SVC_AUTH_LICENSE: { key: 'auth.license', kind: 'string' },
  SVC_AUTH_LICENSE_FILE: { key: 'auth.licenseFile', kind: 'string' },
};

function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
