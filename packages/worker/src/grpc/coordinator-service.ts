import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { PROTO_FILE, PROTO_LOADER_OPTIONS, PROTO_SERVICE, type CoordinatorPackage } from '@trellis/core/protocol';

type CoordinatorConstructor = CoordinatorPackage['trellis']['coordinator']['v1']['Coordinator'];

/**
 * The coordinator's service as a grpc-js client constructor, built from the .proto with protobufjs
 * the way @grpc/proto-loader builds it (same parse options; messages encoded from plain objects
 * and decoded to them with PROTO_LOADER_OPTIONS), without proto-loader itself: it loads Google's
 * descriptor protos and builds descriptor sets for reflection, which a client never uses, and
 * that was about 2 MB of an idle worker's resident memory.
 */
export function coordinatorClientConstructor(): CoordinatorConstructor {
  const root = new protobuf.Root().loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS);
  root.resolveAll();
  const definition: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const method of root.lookupService(PROTO_SERVICE).methodsArray) {
    const request = method.resolvedRequestType;
    const response = method.resolvedResponseType;
    if (request === null || response === null) throw new Error(`${PROTO_SERVICE}.${method.name}: unresolved message type`);
    definition[method.name] = {
      path: `/${PROTO_SERVICE}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: (value: object) => Buffer.from(request.encode(request.fromObject(value)).finish()),
      requestDeserialize: (bytes: Buffer) => request.toObject(request.decode(bytes), PROTO_LOADER_OPTIONS),
      responseSerialize: (value: object) => Buffer.from(response.encode(response.fromObject(value)).finish()),
      responseDeserialize: (bytes: Buffer) => response.toObject(response.decode(bytes), PROTO_LOADER_OPTIONS),
    };
  }
  return grpc.makeGenericClientConstructor(definition, 'Coordinator') as unknown as CoordinatorConstructor;
}
