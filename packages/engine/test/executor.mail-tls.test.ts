import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, runYaml, tempDir } from './support/run-yaml.js';
import { selfSignedCert } from './support/tls-cert.js';

/** What a server saw of one delivered mail: the subject and whether the session was encrypted. */
interface Delivery {
  subject: string;
  secure: boolean;
}

let delivered: Delivery[] = [];
const servers: SMTPServer[] = [];

/** An SMTP server on a spare port: STARTTLS offered on a plain connection, or TLS from the first byte. */
async function startServer(mode: 'starttls' | 'implicit', cert: { key: Buffer; cert: Buffer }): Promise<number> {
  const server = new SMTPServer({
    secure: mode === 'implicit',
    key: cert.key,
    cert: cert.cert,
    authOptional: true,
    logger: false,
    onData: (stream, session, callback) => {
      simpleParser(stream).then((mail) => {
        delivered.push({ subject: mail.subject ?? '', secure: session.secure });
        callback();
      }, callback);
    },
  });
  // A client that refuses the certificate drops the handshake, which the server reports as an error.
  server.on('error', () => undefined);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.server.address() as AddressInfo).port;
}

let starttlsPort = 0;
let implicitPort = 0;

before(async () => {
  const cert = selfSignedCert(tempDir('trellis-smtp-tls-'));
  [starttlsPort, implicitPort] = await Promise.all([startServer('starttls', cert), startServer('implicit', cert)]);
});

beforeEach(() => {
  delivered = [];
});

after(async () => {
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(resolve))));
  cleanupRuns();
});

const mailStep = (subject: string): string => `steps:\n  - {name: m, type: mail, config: {to: a@example.com, from: b@example.com, subject: ${subject}, message: hi}}\n`;

describe('mail over TLS (smtp-server with a self-signed certificate)', () => {
  test('STARTTLS: the session is upgraded before the mail goes; the certificate is checked unless tls_skip_verify', async () => {
    const sent = await runYaml(`smtp: {host: 127.0.0.1, port: ${starttlsPort}, tls_skip_verify: true, timeout: 10}\n${mailStep('upgraded')}`);
    assert.equal(sent.status, RunStatus.Success, nodeOf(sent, 'm').error);
    assert.deepEqual(delivered, [{ subject: 'upgraded', secure: true }]);

    const refused = await runYaml(`smtp: {host: 127.0.0.1, port: ${starttlsPort}, timeout: 10}\n${mailStep('refused')}`);
    assert.deepEqual([refused.status, nodeOf(refused, 'm').status], [RunStatus.Failed, NodeStatus.Failed]);
    assert.match(nodeOf(refused, 'm').error, /^not sent: .*self[- ]signed certificate/i);
    assert.equal(delivered.length, 1, 'nothing was delivered over the unverified server');
  });

  test('implicit TLS (secure: true) from the first byte; checked the same way', async () => {
    const sent = await runYaml(`smtp: {host: 127.0.0.1, port: ${implicitPort}, secure: true, tls_skip_verify: "true", timeout: 10}\n${mailStep('implicit')}`);
    assert.equal(sent.status, RunStatus.Success, nodeOf(sent, 'm').error);
    assert.deepEqual(delivered, [{ subject: 'implicit', secure: true }]);

    const refused = await runYaml(`smtp: {host: 127.0.0.1, port: ${implicitPort}, secure: true, timeout: 10}\n${mailStep('refused')}`);
    assert.equal(refused.status, RunStatus.Failed);
    assert.match(nodeOf(refused, 'm').error, /^not sent: .*self[- ]signed certificate/i);
    assert.equal(delivered.length, 1);
  });
});
