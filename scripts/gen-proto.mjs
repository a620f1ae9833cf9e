#!/usr/bin/env node
// Generates the TypeScript types of protos/ into packages/core/src/protocol/generated (or the
// folder given as the first argument: the staleness test generates into a temporary one and
// compares). proto-loader-gen-types reads the .proto with protobufjs, so no protoc is needed.
// The options mirror PROTO_LOADER_OPTIONS, so the types describe what both sides load.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const outDir = resolve(process.argv[2] ?? join(root, 'packages/core/src/protocol/generated'));
const bin = join(root, 'node_modules/@grpc/proto-loader/build/bin/proto-loader-gen-types.js');

rmSync(outDir, { recursive: true, force: true });
const result = spawnSync(
  process.execPath,
  [
    bin,
    '--longs=Number', '--enums=String', '--defaults', '--oneofs', '--includeComments',
    '--grpcLib=@grpc/grpc-js', '--importFileExtension=.js',
    '-I', 'protos', '-O', outDir,
    'coordinator/v1/coordinator.proto',
  ],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
