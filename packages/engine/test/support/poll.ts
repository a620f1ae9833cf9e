/**
 * Polls `check` until it holds or `timeoutMs` passes (a loaded machine starts a container in
 * seconds, not instantly). It returns either way: the caller's assertion then says what is missing.
 */
export async function pollUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
}
