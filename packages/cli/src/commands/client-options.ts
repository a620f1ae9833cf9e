import { Option } from 'commander';
import { ApiFailure } from '../api-client.js';
import { integerAtLeast } from '../args.js';

const DEFAULT_SERVER = 'http://127.0.0.1:8080/api/v1';

/** Every client command's `--server`. */
export function serverOption(): Option {
  return new Option('--server <url>', 'the API of a running coordinator').env('SVC_SERVER_URL').default(DEFAULT_SERVER);
}

/** Every client command's `--token`: a login token or an API key, sent as `Authorization: Bearer`. */
export function tokenOption(): Option {
  return new Option('--token <token>', 'a login token or API key for a coordinator with auth on').env('SVC_TOKEN');
}

/** `--interval`: how often a command that follows a run polls. */
export function intervalOption(description = 'poll interval when no event stream is available'): Option {
  return new Option('--interval <seconds>', description).argParser(integerAtLeast(1)).default(1);
}

/** Runs a client command: a refusal or an unreachable coordinator is one line on stderr and exit code 1. */
export async function clientCall(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ApiFailure) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
