import { InvalidArgumentError } from 'commander';

/**
 * Parses an option's value as a whole number at least `min`. Commander hands a required option
 * its next argument whatever it looks like, so `--grpc-port -1` arrives here as "-1".
 */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    if (!/^-?\d+$/.test(value) || Number(value) < min) {
      throw new InvalidArgumentError(min === 0 ? 'must be a non-negative integer.' : `must be an integer, at least ${min}.`);
    }
    return Number(value);
  };
}

/** Commander drops what an action returns: the command's exit code leaves through process.exitCode. */
export function exitWith<A extends unknown[]>(action: (...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args) => {
    process.exitCode = await action(...args);
  };
}
