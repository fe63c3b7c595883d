/**
 * What asks a running gateway to reload (docs/operations.md, "Hot reload"): SIGHUP — sent by
 * `portcullis reload`, which finds the process through the pid file (pid-file.ts) and reads the
 * outcome the gateway writes back (reload-answer.ts) — and, when
 * `lifecycle.watch` is on, a change to the config or policy file (config-watch.ts). SIGHUP is
 * caught from the moment the triggers exist, so one that arrives while the gateway is still
 * starting (its default action would kill the process and orphan the children) is held and
 * served once the gateway is up.
 */
import type { GatewayConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { watchedFiles, watchFiles } from './config-watch.js';
import { writePidFile } from './pid-file.js';
import { writeReloadAnswer } from './reload-answer.js';
import type { ReloadOutcome, ReloadTrigger } from './reload.js';

export interface Reloadable {
  reload(trigger: ReloadTrigger): Promise<ReloadOutcome>;
}

export class ReloadTriggers {
  private target: Reloadable | undefined;
  private held = false;
  private readonly stops: Array<() => void> = [];
  private stateDir: string | undefined;
  private logger: Logger | undefined;
  private readonly onHangup = () => {
    if (this.target === undefined) this.held = true;
    else this.signalled(this.target);
  };

  /** A signalled reload; its outcome is written where `portcullis reload` waits for it (reload-answer.ts). */
  private signalled(target: Reloadable): void {
    void target.reload('signal').then((outcome) => {
      if (this.stateDir === undefined) return;
      try {
        writeReloadAnswer(this.stateDir, outcome);
      } catch (error) {
        this.logger?.warn({ code: (error as NodeJS.ErrnoException).code ?? 'unknown error' }, 'cannot write the reload answer in the state directory; `portcullis reload` will not hear it');
      }
    });
  }

  constructor() {
    process.on('SIGHUP', this.onHangup);
  }

  /** The gateway is up: write the pid file, start the watch if configured, serve a held SIGHUP. */
  async attach(gateway: Reloadable, config: Readonly<GatewayConfig>, logger: Logger): Promise<void> {
    this.logger = logger;
    try {
      this.stops.push(writePidFile(config.stateDir));
      this.stateDir = config.stateDir;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      logger.warn({ code }, 'cannot write the pid file in the state directory; `portcullis reload` will not find this gateway (SIGHUP still works)');
    }
    if (config.lifecycle.watch && config.configFile !== undefined) {
      const files = await watchedFiles(config.configFile);
      this.stops.push(watchFiles(files, () => void gateway.reload('watch'), logger));
      logger.info({ files: files.length }, 'watching the config for changes');
    }
    this.target = gateway;
    if (this.held) {
      this.held = false;
      this.signalled(gateway);
    }
  }

  /** Stops listening (the gateway is stopping); the pid file goes. */
  close(): void {
    process.off('SIGHUP', this.onHangup);
    this.target = undefined;
    for (const stop of this.stops.splice(0)) stop();
  }
}
