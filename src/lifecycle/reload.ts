/**
 * Hot reload (docs/operations.md, "Hot reload"): re-read the configuration and the policy it
 * names, and apply the difference to the running gateway without dropping a session or a
 * stream. A new configuration that does not load keeps the running one and logs every problem
 * (each names a field, never a value); one that changes what only a restart can change is
 * refused the same way, naming each such field. Otherwise, in this order: the tool filters and
 * body limits are swapped (one assignment each, so every request sees the old set or the new),
 * each server the new configuration no longer names is withdrawn (`ReloadHost.remove`: hidden
 * from every list, so sessions hear `list_changed`, then stopped), the sessions whose visible
 * tools moved hear `tools/list_changed`, and each server whose entry changed is restarted
 * (server-restart.ts). Reloads run one at a time.
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
  /** Servers withdrawn: hidden from every list, stopped, their side channels gone. */
  readonly removed: readonly string[];
  readonly restarted: readonly string[];
  readonly refiltered: readonly string[];
  /** Restarted servers that did not come back (they keep retrying, in state `error`). */
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
  registry: UpstreamRegistry;
  /** A reason not to reload now (the gateway is draining), or undefined. */
  refusal?: () => string | undefined;
  logger: Logger;
}

const refused = (problems: readonly string[]): ReloadOutcome => ({ applied: false, problems, removed: [], restarted: [], refiltered: [], failed: [] });

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
    const diff = diffConfigs(this.running, next, this.host.serversOf(this.running), servers);
    if (diff.needsRestart.length > 0) {
      this.logRefusal(trigger, 'reload refused: these changes need a restart; the running configuration stays', diff.needsRestart);
      return refused(diff.needsRestart);
    }
    if (isEmptyDiff(diff)) {
      logger.info({ trigger }, 'reload: nothing changed');
      this.running = next;
      return { applied: true, problems: [], removed: [], restarted: [], refiltered: [], failed: [] };
    }
    return this.apply(trigger, next, servers, diff);
  }

  private async apply(trigger: ReloadTrigger, next: Readonly<GatewayConfig>, servers: Readonly<Record<string, ServerConfig>>, diff: ConfigDiff): Promise<ReloadOutcome> {
    const { registry, logger } = this.host;
    this.host.swap(next, servers);
    this.running = next;
    await Promise.all(diff.remove.map((name) => this.host.remove(name)));
    for (const name of diff.remove) logger.info({ server: name }, 'upstream removed');
    const refiltered = diff.deniedTools ? Object.keys(servers).filter((name) => !diff.restart.includes(name)) : [...diff.refilter];
    for (const name of refiltered) registry.announceToolsChanged(name);
    const failed: string[] = [];
    await Promise.all(
      diff.restart.map(async (name) => {
        try {
          await registry.restart(name, servers[name]!);
          logger.info({ server: name }, 'upstream restarted with its new entry');
        } catch (error) {
          failed.push(name);
          logger.error({ server: name, reason: error instanceof Error ? error.message : String(error) }, 'upstream did not come back after reload; retrying in the background');
        }
      }),
    );
    const outcome: ReloadOutcome = { applied: true, problems: [], removed: [...diff.remove], restarted: [...diff.restart], refiltered, failed: failed.sort() };
    logger.info({ trigger, removed: outcome.removed, restarted: outcome.restarted, refiltered, deniedTools: diff.deniedTools, bodyLimits: diff.bodyLimits, failed: outcome.failed }, 'reloaded');
    return outcome;
  }

  private logRefusal(trigger: ReloadTrigger, message: string, problems: readonly string[]): void {
    this.host.logger.warn({ trigger, problems: problems.length }, message);
    for (const problem of problems) this.host.logger.warn({ trigger, problem }, 'reload problem');
  }
}
