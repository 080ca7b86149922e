// Wait on a condition, never on a fixed sleep: polls until check() returns a truthy value.
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${opts.what ?? 'a condition'}${lastError ? `: ${(lastError as Error).message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
