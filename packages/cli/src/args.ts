import { parseArgs, type ParseArgsConfig } from 'node:util';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** A usage problem: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Strict parsing: an unknown flag or a missing value is a usage error, never ignored. */
export function parseCommandArgs(argv: string[], options: OptionSpec): Parsed {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: values, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function stringFlag(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function intFlag(parsed: Parsed, name: string, options: { allowNegative?: boolean } = {}): number | undefined {
  const value = stringFlag(parsed, name);
  if (value === undefined) return undefined;
  if (options.allowNegative === true ? !/^-?\d+$/.test(value) : !/^\d+$/.test(value)) {
    throw new UsageError(`--${name} must be a${options.allowNegative === true ? 'n' : ' non-negative'} integer, got "${value}"`);
  }
  return Number(value);
}
