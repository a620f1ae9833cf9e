import type { Queryable } from '../db/types.js';

/**
 * A secret every coordinator on this database shares (the login token signing key): the first
 * coordinator's generated value wins, the others read it.
 */
export async function sharedSecret(q: Queryable, name: string, generate: () => string): Promise<string> {
  await q.query('INSERT INTO auth_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, generate()]);
  const [row] = await q.query<{ value: string }>('SELECT value FROM auth_secrets WHERE name = $1', [name]);
  if (row === undefined) throw new Error(`auth secret ${name} vanished`);
  return row.value;
}
