// Waits on a condition with a deadline (never a bare sleep guess).

/**
 * Polls check() until it returns a truthy value, which is returned; throws with describe() after timeoutMs.
 * @template T
 * @param {() => T | Promise<T>} check
 * @param {{timeoutMs?: number, intervalMs?: number, describe?: () => string | Promise<string>}} options
 * @returns {Promise<T>}
 */
export async function waitFor(check, { timeoutMs = 10_000, intervalMs = 25, describe = () => "condition" } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${await describe()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
