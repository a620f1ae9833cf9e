import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCerts {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from a CA the coordinator does not trust. */
  strangerCert: string;
  strangerKey: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

function issue(dir: string, name: string, subject: string, ca: string, ext?: string): void {
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  const args = ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2'];
  if (ext !== undefined) {
    writeFileSync(join(dir, `${name}.ext`), ext);
    args.push('-extfile', `${name}.ext`);
  }
  openssl(dir, args);
}

/** A throwaway CA, a server certificate for 127.0.0.1, and client certificates (one from a foreign CA). */
export function makeCerts(dir: string): TestCerts {
  for (const ca of ['ca', 'other-ca']) openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-days', '2', '-subj', `/CN=trellis test ${ca}`]);
  issue(dir, 'server', '/CN=127.0.0.1', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  issue(dir, 'client', '/CN=worker', 'ca');
  issue(dir, 'stranger', '/CN=stranger', 'other-ca');
  const at = (f: string) => join(dir, f);
  return {
    ca: at('ca.crt'),
    serverCert: at('server.crt'),
    serverKey: at('server.key'),
    clientCert: at('client.crt'),
    clientKey: at('client.key'),
    strangerCert: at('stranger.crt'),
    strangerKey: at('stranger.key'),
  };
}
