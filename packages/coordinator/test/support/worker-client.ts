import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_FILE, PROTO_LOADER_OPTIONS, type SessionFrame } from '@trellis/core';

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

type Frame = SessionFrame;

/** A bare Session stream: calls as frames, as the worker daemon sends them. */
export function rawSessionClient(address: string, token?: string) {
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS)) as unknown as ClientPackage;
  const Coordinator = pkg.trellis.coordinator.v1.Coordinator;
  const client = new Coordinator(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  const stream = (client as unknown as { Session(m: grpc.Metadata): grpc.ClientDuplexStream<Frame, Frame> }).Session(metadata);
  const answers = new Map<number, (frame: Frame) => void>();
  let ended: grpc.ServiceError | undefined;
  const closed = new Promise<grpc.ServiceError | undefined>((resolve) => {
    stream.on('error', (error: grpc.ServiceError) => resolve((ended = error)));
    stream.on('end', () => resolve(undefined));
  });
  stream.on('data', (frame: Frame) => answers.get(frame.id)?.(frame));
  let lastId = 0;
  const frame = (fields: Partial<Frame> & { id: number }): Frame => ({ method: '', payload: Buffer.alloc(0), code: 0, message: '', cancel: false, ...fields });
  return {
    /** Sends a request frame; resolves with the decoded response, or rejects with `{code, details}`. */
    call: <T = Record<string, unknown>>(method: string, request: unknown): { id: number; answer: Promise<T> } => {
      const id = (lastId += 1);
      const definition = Coordinator.service[method];
      const answer = new Promise<T>((resolve, reject) => {
        answers.set(id, (f) => (f.code === 0 ? resolve(definition?.responseDeserialize(f.payload) as T) : reject(Object.assign(new Error(f.message), { code: f.code, details: f.message }))));
      });
      stream.write(frame({ id, method, payload: definition !== undefined ? definition.requestSerialize(request) : Buffer.alloc(0) }));
      return { id, answer };
    },
    cancel: (id: number) => stream.write(frame({ id, cancel: true })),
    /** How the stream ended: the refusal, or undefined for a plain end. */
    closed,
    get ended() {
      return ended;
    },
    end: () => stream.end(),
    close: () => {
      stream.cancel();
      client.close();
    },
  };
}
