/**
 * Hot reload (docs/operations.md, "Hot reload"): re-read the configuration and the policy it
 * names, and apply the difference to the running gateway without dropping a session or a
 * stream. A new configuration that does not load keeps the running one and logs every problem
 * (each names a field, never a value); one that changes what only a restart can change is
 * refused the same way, naming each such field. Otherwise, in this order: the tool filters and
 * body limits are swapped (one assignment each, so every request sees the old set or the new),
 * each server the new configuration no longer names is withdrawn (`ReloadHost.remove`: hidden
 * from every list, so sessions hear `list_changed`, then stopped), each server it names for the
 * first time is added (`ReloadHost.add`: started, then listed, so sessions and 2026 listeners
 * hear `list_changed`), the sessions whose visible tools moved hear `tools/list_changed`, and
 * each server whose entry changed is restarted (server-restart.ts). Reloads run one at a time.
 * A new server's entry passed the same checks as at start (the policy's, when the file loaded),
 * so one the policy refuses makes the whole reload invalid.
 */
import { ConfigError, GatewayError } from '../errors.js';
import type { GatewayConfig, ServerConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { diffConfigs, isEmptyDiff, type ConfigDiff } from './config-diff.js';

/** What started a reload (logged with its outcome). */
export type ReloadTrigger = 'signal' | 'watch' | 'admin';

export interface ReloadOutcome {
  /** The new configuration is the running one now. */
  readonly applied: boolean;
  /** Why it was refused: the new configuration's problems, or the changes that need a restart. */
  readonly problems: readonly string[];
  /** Of `problems`, the changes that only a restart can apply (field by field, never a value). */
  readonly needsRestart: readonly string[];
  /** Servers added: started, in every list, with their side channels. */
  readonly added: readonly string[];
  /** Servers withdrawn: hidden from every list, stopped, their side channels gone. */
  readonly removed: readonly string[];
  readonly restarted: readonly string[];
  readonly refiltered: readonly string[];
  /** Added or restarted servers that did not come up (they keep retrying, in state `error`). */
  readonly failed: readonly string[];
}

export interface ReloadHost {
  /** Reads and validates the new configuration; throws `ConfigError` (or a `GatewayError`) when it cannot. */
  load(): Promise<Readonly<GatewayConfig>>;
  /** Every server a configuration runs: its own and its plugins'. */
  serversOf(config: Readonly<GatewayConfig>): Readonly<Record<string, ServerConfig>>;
  /** Installs the new configuration's tool filters, body limits and readable variables, all at once. */
  swap(config: Readonly<GatewayConfig>, servers: Readonly<Record<string, ServerConfig>>): void;
  /**
   * Withdraws one server: gone from every list (sessions hear `list_changed`) and from the
   * customisation list, its side channel closed, then stopped with every child reaped.
   */
  remove(name: string): Promise<void>;
  /**
   * Adds one server: started (unless the global decisions disable it), in every endpoint's lists
   * (sessions hear `list_changed`), the customisation list and `/readyz`, its side channel open.
   * Rejects when it did not come up; it is added all the same, retrying in state `error`.
   */
  add(name: string, config: ServerConfig): Promise<void>;
  registry: UpstreamRegistry;
  /** A reason not to reload now (the gateway is draining), or undefined. */
  refusal?: () => string | undefined;
  logger: Logger;
}

const refused = (problems: readonly string[], needsRestart: readonly string[] = []): ReloadOutcome => ({
  applied: false,
  problems,
  needsRestart,
  added: [],
  removed: [],
  restarted: [],
  refiltered: [],
  failed: [],
});

export class Reloader {
  private running: Readonly<GatewayConfig>;
  private readonly host: ReloadHost;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(running: Readonly<GatewayConfig>, host: ReloadHost) {
    this.running = running;
    this.host = host;
  }

  /** The configuration in force. */
  get config(): Readonly<GatewayConfig> {
    return this.running;
  }

  /** Reloads once the reload before it (if any) is done; never rejects. */
  reload(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const next = this.queue.then(() => this.reloadNow(trigger));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const { logger } = this.host;
    const busy = this.host.refusal?.();
    if (busy !== undefined) {
      logger.warn({ trigger, reason: busy }, 'reload refused');
      return refused([busy]);
    }
    let next: Readonly<GatewayConfig>;
    try {
      next = await this.host.load();
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : [error instanceof GatewayError ? error.message : 'cannot load the configuration'];
      this.logRefusal(trigger, 'reload refused: the new configuration is invalid; the running one stays', problems);
      return refused(problems);
    }
    const servers = this.host.serversOf(next);
    const { registry } = this.host;
    const retired = new Map([...registry.entries.values()].filter((entry) => registry.isRemoved(entry.name)).map((entry) => [entry.name, entry.config]));
    const diff = diffConfigs(this.running, next, this.host.serversOf(this.running), servers, retired);
    if (diff.needsRestart.length > 0) {
      this.logRefusal(trigger, 'reload refused: these changes need a restart; the running configuration stays', diff.needsRestart);
      return refused(diff.needsRestart, diff.needsRestart);
    }
    if (isEmptyDiff(diff)) {
      logger.info({ trigger }, 'reload: nothing changed');
      this.running = next;
      return { applied: true, problems: [], needsRestart: [], added: [], removed: [], restarted: [], refiltered: [], failed: [] };
    }
    return this.apply(trigger, next, servers, diff);
  }

  private async apply(trigger: ReloadTrigger, next: Readonly<GatewayConfig>, servers: Readonly<Record<string, ServerConfig>>, diff: ConfigDiff): Promise<ReloadOutcome> {
    const { registry, logger } = this.host;
    this.host.swap(next, servers);
    this.running = next;
    await Promise.all(diff.remove.map((name) => this.host.remove(name)));
    for (const name of diff.remove) logger.info({ server: name }, 'upstream removed');
    // An added server is announced when it joins the lists; only those already there are re-filtered.
    const refiltered = diff.deniedTools ? Object.keys(servers).filter((name) => !diff.restart.includes(name) && !diff.add.includes(name)) : [...diff.refilter];
    for (const name of refiltered) registry.announceToolsChanged(name);
    const failed: string[] = [];
    const settle = async (name: string, step: () => Promise<void>, done: string, failure: string) => {
      try {
        await step();
        logger.info({ server: name }, done);
      } catch (error) {
        failed.push(name);
        logger.error({ server: name, reason: error instanceof Error ? error.message : String(error) }, failure);
      }
    };
    await Promise.all([
      ...diff.add.map((name) => settle(name, () => this.host.add(name, servers[name]!), 'upstream added by reload', 'added upstream did not come up; retrying in the background')),
      ...diff.restart.map((name) =>
        settle(name, () => registry.restart(name, servers[name]!), 'upstream restarted with its new entry', 'upstream did not come back after reload; retrying in the background'),
      ),
    ]);
    const outcome: ReloadOutcome = { applied: true, problems: [], needsRestart: [], added: [...diff.add], removed: [...diff.remove], restarted: [...diff.restart], refiltered, failed: failed.sort() };
    logger.info({ trigger, added: outcome.added, removed: outcome.removed, restarted: outcome.restarted, refiltered, deniedTools: diff.deniedTools, bodyLimits: diff.bodyLimits, failed: outcome.failed }, 'reloaded');
    return outcome;
  }

  private logRefusal(trigger: ReloadTrigger, message: string, problems: readonly string[]): void {
    this.host.logger.warn({ trigger, problems: problems.length }, message);
    for (const problem of problems) this.host.logger.warn({ trigger, problem }, 'reload problem');
  }
}
