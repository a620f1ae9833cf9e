// Shared by the fixture test and by scripts that (re)write expectations for review.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadDag, parseBaseConfig, toDagDetail, type LoadDagOptions } from '@trellis/core';

export const FIXTURE_DIR = join(import.meta.dirname, 'fixtures');

export function fixtureNames(): string[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.base.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/** What a fixture produces: the detail JSON (and local DAGs) when valid, else the error strings. */
export function runFixture(name: string): unknown {
  const text = readFileSync(join(FIXTURE_DIR, `${name}.yaml`), 'utf8');
  const options: LoadDagOptions = { fileName: name };
  const basePath = join(FIXTURE_DIR, `${name}.base.yaml`);
  if (existsSync(basePath)) {
    const base = parseBaseConfig(readFileSync(basePath, 'utf8'));
    if (base.base === undefined) return { baseErrors: base.errors };
    options.base = base.base;
  }
  const optionsPath = join(FIXTURE_DIR, `${name}.options.json`);
  if (existsSync(optionsPath)) Object.assign(options, JSON.parse(readFileSync(optionsPath, 'utf8')) as LoadDagOptions);
  const result = loadDag(text, options);
  const warnings = result.warnings.length > 0 ? { warnings: result.warnings } : {};
  if (result.dag === undefined) return { errors: result.errors, ...(result.localDags.length > 0 ? { localDags: result.localDags.map((l) => ({ name: l.name, errors: l.errors })) } : {}), ...warnings };
  return {
    dag: toDagDetail(result.dag),
    localDags: result.localDags.map((l) => ({ name: l.name, errors: l.errors, ...(l.dag !== undefined ? { dag: toDagDetail(l.dag) } : {}) })),
    ...warnings,
  };
}
