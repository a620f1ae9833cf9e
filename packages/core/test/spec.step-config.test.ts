import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDag } from '@trellis/core';

/**
 * The config errors of a DAG with these steps (YAML flow mappings, one a line). A type without
 * an executor in this build is refused as well (spec.unsupported.test); its config is still
 * checked, and that check is what these tests read.
 */
function errorsOf(...steps: string[]): string[] {
  return loadDag(`steps:\n${steps.map((s) => `  - ${s}\n`).join('')}`).errors.filter((e) => !e.includes('is not available in this build'));
}

function assertValid(...steps: string[]): void {
  assert.deepEqual(errorsOf(...steps), []);
}

describe('chat: llm settings as the contract states them', () => {
  test('temperature 0.0-2.0, top_p 0.0-1.0, max_tokens positive, known providers, no unknown keys', () => {
    assert.deepEqual(errorsOf('{name: ask, type: chat, llm: {provider: openai, model: m, temperature: 3, top_p: 1.5, max_tokens: 0, stream: maybe, colour: red}}'), [
      'steps[0].llm.temperature: must be a number from 0.0 to 2.0',
      'steps[0].llm.max_tokens: must be a positive integer',
      'steps[0].llm.top_p: must be a number from 0.0 to 1.0',
      'steps[0].llm.stream: must be true or false',
      'steps[0].llm.colour: unknown field',
    ]);
    assert.deepEqual(errorsOf('{name: ask, type: chat, config: {temperature: 3}}'), ['steps[0].config.temperature: must be a number from 0.0 to 2.0']);
    assert.deepEqual(errorsOf('{name: ask, type: chat, llm: {provider: skynet}}'), ['steps[0].llm.provider: must be one of openai, anthropic, gemini, openrouter, local, ollama, vllm, llama']);
  });

  test('the DAG-level llm is checked the same way', () => {
    const result = loadDag('llm: {provider: local, temperature: -0.5}\nsteps:\n  - echo hi\n');
    assert.deepEqual(result.errors, ['llm.temperature: must be a number from 0.0 to 2.0']);
  });

  test('values at the edges, the local aliases and ${...} references are valid', () => {
    assertValid(
      '{name: a, type: chat, llm: {provider: ollama, model: tiny, system: be brief, temperature: 2, top_p: 0, max_tokens: 64, base_url: "http://127.0.0.1:11434", api_key_name: KEY, stream: false}}',
      '{name: b, type: chat, llm: {provider: "${PROVIDER}", temperature: "${TEMP}"}}',
    );
  });
});

describe('s3, archive: commands by name; config keys of the contract', () => {
  test('an unknown s3 command, a bad max_keys and an unknown key', () => {
    assert.deepEqual(errorsOf('{name: s, type: s3, command: explode, config: {bucket: b, max_keys: -1, recursive: maybe, colour: red}}'), [
      'steps[0].command: unknown s3 command "explode" (known: upload, download, list, delete)',
      'steps[0].config.max_keys: must be a positive integer',
      'steps[0].config.recursive: must be true or false',
      'steps[0].config.colour: unknown field',
    ]);
    assertValid(
      '{name: up, type: s3, command: upload, config: {bucket: b, key: k, source: ./f, content_type: text/plain, storage_class: STANDARD}}',
      '{name: ls, type: s3, command: list, config: {bucket: b, prefix: logs/, max_keys: 100, recursive: true}}',
      '{name: any, type: s3, command: "${S3_OP}", config: {bucket: b, destination: ./d}}',
    );
  });

  test('archive: extract, create or list; known formats', () => {
    assert.deepEqual(errorsOf('{name: a, type: archive, command: compress, config: {source: d, format: rar, overwrite: 1}}'), [
      'steps[0].command: unknown archive command "compress" (known: extract, create, list)',
      'steps[0].config.format: must be one of tar, tar.gz, tgz, zip',
      'steps[0].config.overwrite: must be true or false',
    ]);
    assertValid('{name: a, type: archive, command: create, config: {source: data, destination: out.tgz, format: tar.gz, include: "*.txt", exclude: [debug.log], overwrite: "true"}}');
  });

  test('a typed step that runs one command refuses none or several', () => {
    assert.deepEqual(errorsOf('{name: a, type: archive}', '{name: b, type: s3, command: [upload, delete]}'), [
      'steps[0].command: is required: a step of type archive runs extract, create or list',
      'steps[1].command: a step of type s3 runs one command (upload, download, list or delete), got 2',
    ]);
  });
});

describe('redis: modes standalone, sentinel, cluster', () => {
  test('an unknown mode is an error in the step config and in the DAG-level redis', () => {
    assert.deepEqual(errorsOf('{name: r, type: redis, command: GET k, config: {mode: galaxy}}'), ['steps[0].config.mode: must be one of standalone, sentinel, cluster']);
    assert.deepEqual(loadDag('redis: {host: h, mode: ring}\nsteps:\n  - echo\n').errors, ['redis.mode: must be one of standalone, sentinel, cluster']);
    assertValid('{name: r, type: redis, command: GET k, config: {mode: sentinel, sentinel_master: primary, sentinel_addrs: ["h:26379"]}}');
  });

  test('a mode needs its servers, named once where the mode was set; commands are redis words', () => {
    assert.deepEqual(errorsOf('{name: r, type: redis, command: GET k, config: {mode: sentinel, host: h}}', '{name: s, type: redis, config: {mode: cluster, cluster_addrs: [h7000]}}', '{name: t, type: redis, command: ["SET k \\"open", "9x"]}'), [
      'steps[1].config.cluster_addrs[0]: must be host:port',
      'steps[0].config.mode: sentinel mode needs sentinel_master and sentinel_addrs (in config or the DAG-level redis)',
      'steps[1].command: is required: a redis step runs a command such as "GET key" (or config.pipeline)',
      'steps[2].command[0]: unbalanced quote',
      'steps[2].command[1]: "9x" is not a redis command name',
    ]);
    const dagLevel = loadDag('redis: {mode: cluster}\nsteps:\n  - {name: a, type: redis, command: PING}\n  - {name: b, type: redis, command: PING}\n  - {name: c, type: redis, command: PING, config: {cluster_addrs: ["h:7000"]}}\n');
    assert.deepEqual(dagLevel.errors, ['redis.mode: cluster mode needs cluster_addrs (in config or the DAG-level redis)']);
    assertValid('{name: p, type: redis, config: {pipeline: ["SET k \\"a b\\"", [HSET, h, f, 1]], transaction: true, db: 2, timeout: 5}}');
  });
});

describe('http, jq, mail', () => {
  test('http: "METHOD url" with an http(s) URL; config keys and types', () => {
    assert.deepEqual(errorsOf('{name: h, type: http, command: FETCH}', '{name: i, type: http, command: "GET ftp://x", config: {timeout: -1, silent: yes, headers: {A: [1]}, tmeout: 3}}'), [
      'steps[0].command: must be "METHOD url", e.g. "GET https://example.com/health"',
      'steps[1].command: must use an http or https URL, got "ftp:"',
      'steps[1].config.headers.A: must be a string, number or boolean',
      'steps[1].config.timeout: must be a positive number of seconds',
      'steps[1].config.silent: must be true or false',
      'steps[1].config.tmeout: unknown field',
    ]);
    assertValid(
      '{name: h, type: http, command: "POST https://example.com/x", config: {headers: {X-N: 1}, query: {q: a}, body: {k: v}, timeout: 2.5, silent: true, tls_skip_verify: false}}',
      '{name: i, type: http, command: "GET ${BASE}/health", config: {timeout: "30"}}',
    );
  });

  test('the legacy executor form names executor.config', () => {
    assert.deepEqual(errorsOf('{name: h, executor: {type: http, config: {timeout: 0}}, command: "GET http://x"}'), ['steps[0].executor.config.timeout: must be a positive number of seconds']);
  });

  test('jq: config.raw is a boolean; the filter and the JSON input are required', () => {
    assert.deepEqual(errorsOf('{name: q, type: jq, command: ., script: "{}", config: {raw: 1}}', '{name: r, type: jq, script: "{}"}', '{name: s, type: jq, command: .a}'), [
      'steps[0].config.raw: must be true or false',
      'steps[1].command: is required: a step of type jq runs the jq filter',
      'steps[2].script: is required: a step of type jq reads its JSON input from script',
    ]);
    assertValid('{name: q, type: jq, command: ".a | tostring", script: "{\\"a\\": 1}", config: {raw: true}}');
  });

  test('mail: to, from, subject, message, contentType, attachments', () => {
    assert.deepEqual(loadDag('smtp: {host: m}\nsteps:\n  - {name: m, type: mail, config: {to: 5, subject: hi, cc: x}}\n').errors, [
      'steps[0].config.to: must be an address or a list of addresses',
      'steps[0].config.from: is required',
      'steps[0].config.cc: unknown field',
    ]);
    assert.deepEqual(loadDag('smtp: {host: m}\nsteps:\n  - {name: m, type: mail, config: {to: [a@example.com], from: t@example.com, subject: s, message: m, contentType: text/html, attachments: out.txt}}\n').errors, []);
  });
});
