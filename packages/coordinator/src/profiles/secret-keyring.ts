import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InternalError, ServiceUnavailableError } from '@trellis/core';
import type { BackendCapabilities, SealedSecret } from '@trellis/store';
import type { SecretKeysConfig } from '../config/load.js';
import type { Logger } from '../logging/logger.js';

const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
/** The generated key of the embedded database, beside its data. */
export const GENERATED_KEY_FILE = 'secrets.key';

interface KeyEncryptionKey {
  id: string;
  key: Buffer;
}

/** A key's id: derived from the key (a digest prefix), so operators never name keys and two coordinators agree on it. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('trellis-secret-kek').update(key).digest('hex').slice(0, 16);
}

function fromBase64(value: string): KeyEncryptionKey {
  const key = Buffer.from(value, 'base64');
  return { id: keyIdOf(key), key };
}

/**
 * The key-encryption keys of the secret store: values are sealed with the current key
 * (AES-256-GCM, a fresh 12-byte nonce each, the secret's id as associated data so a sealed value
 * cannot be moved to another row) and opened with whichever held key sealed them.
 */
export class SecretKeyring {
  private readonly byId: Map<string, Buffer>;

  constructor(
    private readonly current: KeyEncryptionKey | undefined,
    previous: KeyEncryptionKey[],
    /** Why there is no current key, for the refusal. */
    private readonly missingReason = 'no key-encryption key is configured',
  ) {
    this.byId = new Map([...previous, ...(current !== undefined ? [current] : [])].map((k) => [k.id, k.key]));
  }

  /** The id of the key that seals new values; undefined when none is configured. */
  get currentKeyId(): string | undefined {
    return this.current?.id;
  }

  /** Ids of every key held, current first. */
  get keyIds(): string[] {
    const ids = [...this.byId.keys()];
    return this.current !== undefined ? [this.current.id, ...ids.filter((id) => id !== this.current?.id)] : ids;
  }

  /** The key that seals new values; refused (503) when none is configured. */
  private sealingKey(): KeyEncryptionKey {
    if (this.current === undefined) throw new ServiceUnavailableError(`secrets cannot be stored: ${this.missingReason}`);
    return this.current;
  }

  /** The current key's id; refused like `seal` when there is none. */
  requireCurrentKeyId(): string {
    return this.sealingKey().id;
  }

  seal(plaintext: string, secretId: string): SealedSecret {
    const current = this.sealingKey();
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, current.key, nonce);
    cipher.setAAD(Buffer.from(secretId));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: current.id, nonce, ciphertext, authTag: cipher.getAuthTag() };
  }

  /** The plaintext; an error naming the key id (never a value) when the key is not held or the value was tampered with. */
  open(sealed: SealedSecret, secretId: string): string {
    const key = this.byId.get(sealed.keyId);
    if (key === undefined) throw new InternalError(`secret ${secretId} is sealed with key ${sealed.keyId}, which this coordinator does not hold; configure it in secretsPreviousKeys`);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, sealed.nonce);
      decipher.setAAD(Buffer.from(secretId));
      decipher.setAuthTag(sealed.authTag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new InternalError(`secret ${secretId} does not open with key ${sealed.keyId}: its stored form was altered`);
    }
  }

  holds(keyId: string): boolean {
    return this.byId.has(keyId);
  }
}

/**
 * The keyring of this coordinator. Configured keys win. Without one, the embedded database (one
 * coordinator by construction) generates a key once in its data directory, mode 0600; a
 * PostgreSQL server may be shared by several coordinators, which must all hold the same key,
 * so none is generated there and storing a secret is refused until the operator sets one.
 */
export function openSecretKeyring(keys: SecretKeysConfig, backend: BackendCapabilities, dataDir: string, logger: Logger): SecretKeyring {
  const previous = keys.previous.map(fromBase64);
  if (keys.current !== undefined) return new SecretKeyring(fromBase64(keys.current), previous);
  if (backend.name === 'pglite') return new SecretKeyring(generatedKey(dataDir, logger), previous);
  logger.warn('no key-encryption key for runtime-profile secrets (secretsKey / SVC_SECRETS_KEY or secretsKeyFile): storing secrets is refused');
  return new SecretKeyring(undefined, previous, 'no key-encryption key is configured; set secretsKey (SVC_SECRETS_KEY) or secretsKeyFile to the same key on every coordinator');
}

function generatedKey(dataDir: string, logger: Logger): KeyEncryptionKey {
  const file = join(dataDir, GENERATED_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    // `wx`: never overwrite a key that seals existing values.
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    logger.info('generated the key-encryption key for runtime-profile secrets; back it up with the data directory', { file });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if ((statSync(file).mode & 0o077) !== 0) {
      chmodSync(file, 0o600);
      logger.warn('the secrets key file was readable by others; its mode is now 0600', { file });
    }
  }
  const line = readFileSync(file, 'utf8').trim();
  const key = Buffer.from(line, 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  logger.info('runtime-profile secrets use the generated key of the embedded database', { file, keyId: keyIdOf(key) });
  return { id: keyIdOf(key), key };
}
