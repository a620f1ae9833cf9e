import { createHash } from 'node:crypto';
import { InternalError } from '@trellis/core';
import type { Db } from '../db/types.js';
import { sql as runs } from './0001_runs.js';
import { sql as dagState } from './0002_dag_state.js';
import { sql as dispatch } from './0003_dispatch.js';
import { sql as scheduler } from './0004_scheduler.js';
import { sql as metrics } from './0005_metrics.js';
import { sql as events } from './0006_events.js';
import { sql as runCommands } from './0007_run_commands.js';
import { sql as runEnv } from './0008_run_env.js';
import { sql as runsFillfactor } from './0009_runs_fillfactor.js';
import { sql as admissionFunction } from './0010_admission_function.js';
import { sql as runSecretParams } from './0011_run_secret_params.js';
import { sql as secretRunEnv } from './0012_secret_run_env.js';
import { sql as users } from './0013_users.js';
import { sql as apiKeys } from './0014_api_keys.js';
import { sql as webhooks } from './0015_webhooks.js';
import { sql as oidcIdentities } from './0016_oidc_identities.js';
import { sql as runTriggeredBy } from './0017_run_triggered_by.js';
import { sql as storedFiles } from './0018_stored_files.js';
import { sql as runLogs } from './0020_run_logs.js';
import { sql as profiles } from './0023_profiles.js';
import { sql as webhookProfiles } from './0024_webhook_profiles.js';
import { sql as runProfileEntries } from './0026_run_profile_entries.js';
import { sql as sealedRunSecretParams } from './0027_sealed_run_secret_params.js';
import { sql as syncState } from './0028_sync_state.js';
import { sql as syncedSpecs } from './0029_synced_specs.js';
import { sql as nodeEvents } from './0030_node_events.js';
import { sql as profileVersion } from './0031_profile_version.js';

interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** In order; never edit one that has landed: add the next number instead. */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: '0001_runs', sql: runs },
  { version: 2, name: '0002_dag_state', sql: dagState },
  { version: 3, name: '0003_dispatch', sql: dispatch },
  { version: 4, name: '0004_scheduler', sql: scheduler },
  { version: 5, name: '0005_metrics', sql: metrics },
  { version: 6, name: '0006_events', sql: events },
  { version: 7, name: '0007_run_commands', sql: runCommands },
  { version: 8, name: '0008_run_env', sql: runEnv },
  { version: 9, name: '0009_runs_fillfactor', sql: runsFillfactor },
  { version: 10, name: '0010_admission_function', sql: admissionFunction },
  { version: 11, name: '0011_run_secret_params', sql: runSecretParams },
  { version: 12, name: '0012_secret_run_env', sql: secretRunEnv },
  { version: 13, name: '0013_users', sql: users },
  { version: 14, name: '0014_api_keys', sql: apiKeys },
  { version: 15, name: '0015_webhooks', sql: webhooks },
  { version: 16, name: '0016_oidc_identities', sql: oidcIdentities },
  { version: 17, name: '0017_run_triggered_by', sql: runTriggeredBy },
  { version: 18, name: '0018_stored_files', sql: storedFiles },
  { version: 20, name: '0020_run_logs', sql: runLogs },
  { version: 23, name: '0023_profiles', sql: profiles },
  { version: 24, name: '0024_webhook_profiles', sql: webhookProfiles },
  { version: 26, name: '0026_run_profile_entries', sql: runProfileEntries },
  { version: 27, name: '0027_sealed_run_secret_params', sql: sealedRunSecretParams },
  { version: 28, name: '0028_sync_state', sql: syncState },
  { version: 29, name: '0029_synced_specs', sql: syncedSpecs },
  { version: 30, name: '0030_node_events', sql: nodeEvents },
  { version: 31, name: '0031_profile_version', sql: profileVersion },
];

/** Any constant shared by every coordinator: the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 7_320_001;

function checksum(sql: string): string {
  return createHash('sha256').update(sql).digest('hex');
}

/**
 * A migration's statements: each ends with `;` at the end of a line, except inside `$$` bodies
 * (trigger functions), whose lines end with `;` too.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBody = false;
  for (const line of sql.split('\n')) {
    current.push(line);
    if ((line.match(/\$\$/g) ?? []).length % 2 === 1) inBody = !inBody;
    if (!inBody && /;\s*$/.test(line)) {
      statements.push(current.join('\n').trim());
      current = [];
    }
  }
  const rest = current.join('\n').trim();
  if (rest !== '') statements.push(rest);
  return statements.filter((s) => s !== ';');
}

/** The schema cannot be brought up to date: a fault of the installation, not of a request. */
export class MigrationError extends InternalError {}

/**
 * Applies pending migrations under a transaction-scoped advisory lock, so two coordinators
 * starting together apply each migration once. An applied migration whose text changed
 * stops start-up: the database no longer matches what the code expects.
 */
export async function migrate(db: Db): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const applied = new Map((await tx.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations')).map((r) => [r.version, r.checksum]));
    const done: number[] = [];
    for (const migration of MIGRATIONS) {
      const sum = checksum(migration.sql);
      const seen = applied.get(migration.version);
      if (seen !== undefined) {
        if (seen !== sum) throw new MigrationError(`migration ${migration.name} was changed after it was applied; restore it and add a new migration instead`);
        continue;
      }
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migration.version, migration.name, sum]);
      done.push(migration.version);
    }
    return done;
  });
}
