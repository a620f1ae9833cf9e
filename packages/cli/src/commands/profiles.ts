import type { Command } from 'commander';
import { ApiClient } from '../api-client.js';
import { exitWith } from '../args.js';
import { table } from '../table.js';
import { clientCall, serverOption, tokenOption } from './client-options.js';

interface EntryView {
  key: string;
  kind: 'variable' | 'secret';
  value?: string;
  secretId?: string;
}

interface ProfileView {
  name: string;
  description: string;
  status: string;
  protected: boolean;
  entries: EntryView[];
}

interface ClientOptions {
  server: string;
  token?: string;
}

const LAYERS = `A <profile> is a profile name, _global for the Global defaults, or _workspaces/<name>
for a workspace's defaults.`;

/** The API path of a layer: `_workspaces/<name>` keeps its slash, everything else is one segment. */
function layerPath(profile: string): string {
  const workspace = /^_workspaces\/(.+)$/.exec(profile);
  return `/profiles/${workspace?.[1] !== undefined ? `_workspaces/${encodeURIComponent(workspace[1])}` : encodeURIComponent(profile)}`;
}

/** Standard input to its end, less one trailing line break (what `echo` or a here-string adds). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY === true) process.stderr.write('type the secret value, then Ctrl-D on a new line\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

function client(options: ClientOptions): ApiClient {
  return new ApiClient(options.server, options.token);
}

function addList(profiles: Command): void {
  profiles
    .command('list [profile]')
    .summary('list runtime profiles, or the entries of one')
    .description(`Without <profile>, lists the runtime profiles you may see (protected ones only for admins).
With it, lists its entries: variables with their values, secrets by key and secret id only.
${LAYERS}`)
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((profile: string | undefined, options: ClientOptions) =>
        clientCall(async () => {
          if (profile === undefined) {
            const answer = await client(options).get('/profiles');
            const rows = [['NAME', 'STATUS', 'PROTECTED', 'ENTRIES', 'DESCRIPTION']];
            for (const p of answer.profiles as ProfileView[]) rows.push([p.name, p.status, p.protected ? 'yes' : 'no', String(p.entries.length), p.description]);
            process.stdout.write(`${table(rows)}\n`);
            return 0;
          }
          const answer = (await client(options).get(layerPath(profile))) as unknown as ProfileView;
          const rows = [['KEY', 'KIND', 'VALUE']];
          for (const e of answer.entries) rows.push([e.key, e.kind, e.kind === 'secret' ? `(secret ${e.secretId ?? ''})` : (e.value ?? '')]);
          process.stdout.write(`${table(rows)}\n`);
          return 0;
        }),
      ),
    );
}

function addSetVariable(profiles: Command): void {
  profiles
    .command('set-variable <profile> <key> <value>')
    .summary('set a plain variable of a profile')
    .description(`Sets a variable (a plain environment variable for runs). Use set-secret for anything secret:
a value on the command line is visible to other users of this host.
${LAYERS}`)
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((profile: string, key: string, value: string, options: ClientOptions) =>
        clientCall(async () => {
          await client(options).put(`${layerPath(profile)}/variables/${encodeURIComponent(key)}`, { value });
          process.stdout.write(`set variable ${key} of ${profile}\n`);
          return 0;
        }),
      ),
    );
}

function addSetSecret(profiles: Command): void {
  profiles
    .command('set-secret <profile> <key>')
    .summary('set or replace a secret of a profile; the value is read from standard input')
    .description(`Sets or replaces a secret. The value is read from standard input (one trailing line break
dropped), never from the command line, so it stays out of shell history and process lists:
  trellis profiles set-secret prod DB_PASSWORD < password.txt
The coordinator encrypts it at rest and never returns it.
${LAYERS}`)
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((profile: string, key: string, options: ClientOptions) =>
        clientCall(async () => {
          const value = await readStdin();
          const entry = (await client(options).put(`${layerPath(profile)}/secrets/${encodeURIComponent(key)}`, { value })) as unknown as EntryView;
          process.stdout.write(`set secret ${key} of ${profile} (secret id ${entry.secretId ?? ''})\n`);
          return 0;
        }),
      ),
    );
}

function addDelete(profiles: Command): void {
  profiles
    .command('delete <profile> [key]')
    .summary('delete a profile, or one entry of it')
    .description(`With <key>, deletes that entry (a secret's encrypted value with it); without, deletes the
profile with all its entries. Defaults layers (_global, _workspaces/<name>) lose entries only.`)
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((profile: string, key: string | undefined, options: ClientOptions) =>
        clientCall(async () => {
          await client(options).delete(key !== undefined ? `${layerPath(profile)}/entries/${encodeURIComponent(key)}` : layerPath(profile));
          process.stdout.write(key !== undefined ? `deleted ${key} of ${profile}\n` : `deleted profile ${profile}\n`);
          return 0;
        }),
      ),
    );
}

function addRotateKey(secrets: Command): void {
  secrets
    .command('rotate-key')
    .summary("re-encrypt every secret under the coordinator's current key (admin)")
    .description(`Asks the coordinator (POST /secrets/rotate-key, admin) to re-encrypt every stored secret under
its current key-encryption key. Runs keep reading secrets throughout. Procedure:
  1. give every coordinator the new key as secretsKey and the old one in secretsPreviousKeys
     (SVC_SECRETS_PREVIOUS_KEYS), restarting them one at a time;
  2. run this command;
  3. remove the old key from the configuration.
Exit status 1 when some secrets are sealed with keys the coordinator does not hold (listed).`)
    .addOption(serverOption())
    .addOption(tokenOption())
    .action(
      exitWith((options: ClientOptions) =>
        clientCall(async () => {
          const answer = (await client(options).post('/secrets/rotate-key')) as { keyId: string; reencrypted: number; remaining: Record<string, number> };
          process.stdout.write(`re-encrypted ${answer.reencrypted} secrets under key ${answer.keyId}\n`);
          const left = Object.entries(answer.remaining);
          for (const [keyId, count] of left) process.stderr.write(`${count} secrets are sealed with key ${keyId}, which the coordinator does not hold\n`);
          return left.length === 0 ? 0 : 1;
        }),
      ),
    );
}

export function addProfileCommands(program: Command): void {
  const profiles = program.command('profiles').summary('manage runtime profiles (variables and secrets for runs)').description(`Runtime profiles: named sets of variables and secrets chosen when a run starts.\n${LAYERS}`);
  addList(profiles);
  addSetVariable(profiles);
  addSetSecret(profiles);
  addDelete(profiles);
  const secrets = program.command('secrets').summary('manage the secret store').description('The secret store of runtime profiles.');
  addRotateKey(secrets);
}
