/**
 * Cleanup stacks and bounded waits. Every wait has a deadline that only guards against a hang;
 * none asserts on speed.
 */

/** LIFO cleanup actions; `run()` in afterEach/afterAll, runs them all, then rethrows the first error. */
export class Cleanup {
  private readonly actions: Array<() => Promise<void> | void> = [];

  add(action: () => Promise<void> | void): void {
    this.actions.push(action);
  }

  async run(): Promise<void> {
    const errors: unknown[] = [];
    for (const action of this.actions.splice(0).reverse()) {
      try {
        await action();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  }
}

/** Rejects naming `what` if `promise` has not settled within `ms` (a hang guard). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang guard: ${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A condition over data that events change: `until` checks it at once and again each time the
 * event handler that changed the data calls `changed()`, with no timer but the hang guard. A
 * check that throws rejects at once (e.g. "the process exited before printing it").
 */
export class Changes {
  private readonly waiters = new Set<() => void>();

  changed(): void {
    for (const check of [...this.waiters]) check();
  }

  until<T>(check: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const settle = (): void => {
        this.waiters.delete(test);
        clearTimeout(timer);
      };
      const test = (): void => {
        let value: T | undefined | false;
        try {
          value = check();
        } catch (error) {
          settle();
          reject(error as Error);
          return;
        }
        if (value === undefined || value === false) return;
        settle();
        resolve(value);
      };
      const timer = setTimeout(() => {
        settle();
        reject(new Error(`hang guard: ${what} did not happen within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(test);
      test();
    });
  }
}

/**
 * Polls `check` until it returns something other than `undefined`/`false`; rejects after
 * `timeoutMs`. Only for a condition no event reports (a grandchild's death, a cache nothing outside
 * reads); where an event changes the data, {@link Changes} waits on it instead.
 */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`hang guard: ${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
