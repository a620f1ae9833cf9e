import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client, StorageClass, _Object } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { toError } from '@trellis/core';
import { failWith, flag, issuesOf, positiveInt } from './service-config.js';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';

const s3Schema = z.object({
  bucket: z.string().min(1),
  key: z.string().optional(),
  prefix: z.string().default(''),
  source: z.string().optional(),
  destination: z.string().optional(),
  content_type: z.string().optional(),
  storage_class: z.string().optional(),
  max_keys: positiveInt.optional(),
  recursive: flag.default(false),
  region: z.string().min(1).optional(),
  endpoint: z.url().optional(),
  force_path_style: flag.default(false),
  access_key_id: z.string().optional(),
  secret_access_key: z.string().optional(),
  session_token: z.string().optional(),
});
type S3Settings = z.output<typeof s3Schema>;
type S3Module = typeof S3Sdk;

interface S3Call {
  sdk: S3Module;
  client: S3Client;
  settings: S3Settings;
  ctx: StepExecutionContext;
}

const uri = (bucket: string, key: string): string => `s3://${bucket}/${key}`;

/** Credentials from config, else the step's AWS_* environment (where secrets land), else the SDK's own chain. */
function credentialsOf(settings: S3Settings, env: Record<string, string>): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined {
  const accessKeyId = settings.access_key_id ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = settings.secret_access_key ?? env.AWS_SECRET_ACCESS_KEY;
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined;
  const sessionToken = settings.session_token ?? env.AWS_SESSION_TOKEN;
  return { accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) };
}

/** Every file under a directory, as paths relative to it with `/` separators. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/')).sort();
}

async function putFile(call: S3Call, path: string, key: string): Promise<void> {
  const { sdk, client, settings, ctx } = call;
  const size = (await stat(path)).size;
  await client.send(
    new sdk.PutObjectCommand({
      Bucket: settings.bucket,
      Key: key,
      Body: createReadStream(path),
      ContentLength: size,
      ...(settings.content_type !== undefined ? { ContentType: settings.content_type } : {}),
      ...(settings.storage_class !== undefined ? { StorageClass: settings.storage_class as StorageClass } : {}),
    }),
    { abortSignal: ctx.signal },
  );
  ctx.stdout.write(`uploaded ${relative(ctx.workingDir, path) || path} to ${uri(settings.bucket, key)} (${size} bytes)\n`);
}

async function upload(call: S3Call): Promise<StepExecutionResult | undefined> {
  const { settings, ctx } = call;
  if (settings.source === undefined) return failWith(ctx.stderr, 's3', 'upload needs config.source');
  const source = resolve(ctx.workingDir, settings.source);
  if (!settings.recursive) {
    if (settings.key === undefined) return failWith(ctx.stderr, 's3', 'upload needs config.key (or recursive with a prefix)');
    return void (await putFile(call, source, settings.key));
  }
  for (const file of await filesUnder(source)) await putFile(call, join(source, file), `${settings.prefix}${file}`);
  return undefined;
}

/** Objects under a prefix (and, with a delimiter, the "folders" one level down), page by page, up to `limit` entries in all. */
async function listObjects(call: S3Call, prefix: string, limit: number, delimiter?: string): Promise<{ objects: _Object[]; prefixes: string[] }> {
  const { sdk, client, settings, ctx } = call;
  const objects: _Object[] = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new sdk.ListObjectsV2Command({ Bucket: settings.bucket, Prefix: prefix, MaxKeys: Math.min(1000, limit - objects.length - prefixes.length), ...(delimiter !== undefined ? { Delimiter: delimiter } : {}), ...(token !== undefined ? { ContinuationToken: token } : {}) }),
      { abortSignal: ctx.signal },
    );
    objects.push(...(page.Contents ?? []));
    for (const p of page.CommonPrefixes ?? []) if (p.Prefix !== undefined) prefixes.push(p.Prefix);
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined && objects.length + prefixes.length < limit);
  return { objects, prefixes };
}

/** A key's local path under the destination; a key that would climb out of it is refused. */
function localPathOf(destination: string, name: string): string | undefined {
  const path = resolve(destination, name);
  return path.startsWith(`${destination}${sep}`) ? path : undefined;
}

async function getFile(call: S3Call, key: string, path: string): Promise<void> {
  const { sdk, client, settings, ctx } = call;
  const object = await client.send(new sdk.GetObjectCommand({ Bucket: settings.bucket, Key: key }), { abortSignal: ctx.signal });
  await mkdir(dirname(path), { recursive: true });
  await pipeline(object.Body as Readable, createWriteStream(path), { signal: ctx.signal });
  ctx.stdout.write(`downloaded ${uri(settings.bucket, key)} to ${relative(ctx.workingDir, path) || path} (${(await stat(path)).size} bytes)\n`);
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

async function download(call: S3Call): Promise<StepExecutionResult | undefined> {
  const { settings, ctx } = call;
  if (settings.destination === undefined) return failWith(ctx.stderr, 's3', 'download needs config.destination');
  const destination = resolve(ctx.workingDir, settings.destination);
  if (!settings.recursive) {
    if (settings.key === undefined) return failWith(ctx.stderr, 's3', 'download needs config.key (or recursive with a prefix)');
    const intoDir = settings.destination.endsWith('/') || (await isDirectory(destination));
    return void (await getFile(call, settings.key, intoDir ? join(destination, settings.key.split('/').pop() ?? settings.key) : destination));
  }
  for (const object of (await listObjects(call, settings.prefix, settings.max_keys ?? Infinity)).objects) {
    const key = object.Key ?? '';
    if (key.endsWith('/')) continue; // a "folder" marker holds no file
    const path = localPathOf(destination, key.slice(settings.prefix.length));
    if (path === undefined) return failWith(ctx.stderr, 's3', `key "${key}" would be written outside the destination`);
    await getFile(call, key, path);
  }
  return undefined;
}

/** One JSON document: the objects (and, unless recursive, the "folders" one level down). */
async function list(call: S3Call): Promise<undefined> {
  const { settings, ctx } = call;
  const found = await listObjects(call, settings.prefix, settings.max_keys ?? Infinity, settings.recursive ? undefined : '/');
  const objects = found.objects.map((o) => ({ key: o.Key ?? '', size: o.Size ?? 0, last_modified: o.LastModified?.toISOString() ?? '', ...(o.StorageClass !== undefined ? { storage_class: o.StorageClass } : {}) }));
  ctx.stdout.write(`${JSON.stringify({ bucket: settings.bucket, prefix: settings.prefix, objects, prefixes: found.prefixes })}\n`);
  return undefined;
}

async function remove(call: S3Call): Promise<StepExecutionResult | undefined> {
  const { sdk, client, settings, ctx } = call;
  if (!settings.recursive) {
    if (settings.key === undefined) return failWith(ctx.stderr, 's3', 'delete needs config.key (or recursive with a prefix)');
    await client.send(new sdk.DeleteObjectCommand({ Bucket: settings.bucket, Key: settings.key }), { abortSignal: ctx.signal });
    return void ctx.stdout.write(`deleted ${uri(settings.bucket, settings.key)}\n`);
  }
  const keys = (await listObjects(call, settings.prefix, settings.max_keys ?? Infinity)).objects.map((o) => o.Key ?? '');
  for (let at = 0; at < keys.length; at += 1000) {
    const batch = keys.slice(at, at + 1000);
    const result = await client.send(new sdk.DeleteObjectsCommand({ Bucket: settings.bucket, Delete: { Objects: batch.map((Key) => ({ Key })) } }), { abortSignal: ctx.signal });
    const failed = result.Errors ?? [];
    for (const key of batch) if (!failed.some((e) => e.Key === key)) ctx.stdout.write(`deleted ${uri(settings.bucket, key)}\n`);
    const [first] = failed;
    if (first !== undefined) return failWith(ctx.stderr, 's3', `could not delete ${failed.length} object(s), first ${uri(settings.bucket, first.Key ?? '')}: ${first.Message ?? first.Code ?? 'unknown error'}`);
  }
  return undefined;
}

const COMMANDS: Record<string, (call: S3Call) => Promise<StepExecutionResult | undefined>> = { upload, download, list, delete: remove };

/**
 * `type: s3`: the command is upload, download, list or delete; config bucket, key, prefix,
 * source, destination, content_type, storage_class, max_keys and recursive, plus region,
 * endpoint and force_path_style for S3-compatible stores and optional credentials. Local paths
 * are relative to the step's working directory. The AWS SDK is imported on the first s3 step.
 */
export const s3Executor: StepExecutor = {
  type: 's3',
  async run(ctx) {
    const name = ctx.step.commands[0]?.trim() ?? '';
    const command = COMMANDS[name];
    if (command === undefined) return failWith(ctx.stderr, 's3', `unknown s3 command "${name}" (known: upload, download, list, delete)`);
    const parsed = s3Schema.safeParse(ctx.step.config);
    if (!parsed.success) return failWith(ctx.stderr, 's3', `invalid s3 config: ${issuesOf(parsed.error)}`);
    const settings = parsed.data;
    const sdk = await import('@aws-sdk/client-s3');
    const credentials = credentialsOf(settings, ctx.env);
    const client = new sdk.S3Client({
      region: settings.region ?? ctx.env.AWS_REGION ?? 'us-east-1',
      forcePathStyle: settings.force_path_style,
      // S3-compatible stores often lack the newer optional checksums: send them only where S3 requires one.
      ...(settings.endpoint !== undefined ? { endpoint: settings.endpoint, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
      ...(credentials !== undefined ? { credentials } : {}),
    });
    ctx.stderr.write(`s3: ${name} ${uri(settings.bucket, settings.key ?? settings.prefix)}${settings.endpoint !== undefined ? ` at ${settings.endpoint}` : ''}\n`);
    try {
      return (await command({ sdk, client, settings, ctx })) ?? { exitCode: 0 };
    } catch (caught) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 's3 step stopped' };
      return failWith(ctx.stderr, 's3', `${name} failed: ${toError(caught).message}`);
    } finally {
      client.destroy();
    }
  },
};
