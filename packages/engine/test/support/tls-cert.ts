import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSignedCert {
  keyPath: string;
  certPath: string;
  key: Buffer;
  cert: Buffer;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI in `dir`. */
export function selfSignedCert(dir: string): SelfSignedCert {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    { stdio: 'ignore', timeout: 30_000 },
  );
  return { keyPath, certPath, key: readFileSync(keyPath), cert: readFileSync(certPath) };
}
