import { clearLoginFailures, loginBlockedFor, recordLoginFailure, type Queryable, type ThrottleKey, type ThrottlePolicy } from '@trellis/store';
import { TooManyRequestsError } from '@trellis/core';
import { KeyedTurns } from '../concurrency/keyed-turns.js';

/** An account: a few guesses, then a pause. */
const PER_USERNAME: ThrottlePolicy = { maxFailures: 5, windowSec: 300, blockSec: 300 };
/** An address may hold many accounts (NAT, a CI fleet): more room, the same pause. */
const PER_ADDRESS: ThrottlePolicy = { maxFailures: 20, windowSec: 300, blockSec: 300 };

export interface ThrottlePolicies {
  username: ThrottlePolicy;
  address: ThrottlePolicy;
}

/**
 * Failed logins, counted per username and per source address in PostgreSQL, so the count
 * survives a restart and is shared by every coordinator.
 */
export class LoginThrottle {
  constructor(
    private readonly db: Queryable,
    private readonly policies: ThrottlePolicies = { username: PER_USERNAME, address: PER_ADDRESS },
  ) {}

  /** The guess on its way for each username here: the next one waits for it (see `serially`). */
  private readonly guesses = new KeyedTurns();

  /**
   * Runs one password check for `username` after the previous one here has ended. A guess costs
   * a bcrypt compare (~200 ms) before its failure is counted, so a burst sent in parallel would
   * all pass `check` before the first failure lands: one at a time, each burst member sees the
   * failures of those before it. (Across coordinators a burst gets one guess in flight per process.)
   */
  serially<T>(username: string, guess: () => Promise<T>): Promise<T> {
    return this.guesses.run(username, guess);
  }

  /** 429 with Retry-After while the account or the address is blocked. */
  async check(username: string, address: string): Promise<void> {
    const seconds = await loginBlockedFor(this.db, this.keys(username, address));
    if (seconds > 0) throw new TooManyRequestsError(`too many failed logins; try again in ${seconds} s`, seconds);
  }

  async failed(username: string, address: string): Promise<void> {
    const [byName, byAddress] = this.keys(username, address);
    if (byName !== undefined) await recordLoginFailure(this.db, byName, this.policies.username);
    if (byAddress !== undefined) await recordLoginFailure(this.db, byAddress, this.policies.address);
  }

  async succeeded(username: string): Promise<void> {
    await clearLoginFailures(this.db, { scope: 'username', subject: username });
  }

  private keys(username: string, address: string): ThrottleKey[] {
    return [{ scope: 'username', subject: username }, { scope: 'address', subject: address }];
  }
}
