import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_FILE, PROTO_LOADER_OPTIONS } from '@trellis/core';

interface ClientPackage {
  trellis: { coordinator: { v1: { Coordinator: grpc.ServiceClientConstructor } } };
}

type Raw = (request: unknown, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, response?: unknown) => void) => void;

/** A bare protocol client: tests speak the wire protocol directly, as a worker would. */
export function rawWorkerClient(address: string, token?: string) {
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS)) as unknown as ClientPackage;
  const client = new pkg.trellis.coordinator.v1.Coordinator(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return {
    call: <T = Record<string, unknown>>(method: string, request: unknown): Promise<T> =>
      new Promise((resolve, reject) => {
        const fn = (client as unknown as Record<string, Raw>)[method];
        if (fn === undefined) throw new Error(`no method ${method}`);
        fn.call(client, request, metadata, (error, response) => (error !== null ? reject(error) : resolve(response as T)));
      }),
    close: () => client.close(),
  };
}
