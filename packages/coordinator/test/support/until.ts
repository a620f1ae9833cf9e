import assert from 'node:assert/strict';

/** Polls `check` every `everyMs` until it holds; fails the test, naming `what`, after `timeoutMs`. */
export async function until(what: string, check: () => boolean, timeoutMs = 10_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
