import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';

export interface ShutdownOptions {
  logger: Logger;
  /** After this long the process exits 1 even if hooks still run. Default 30 s. */
  timeoutMs?: number;
  signals?: readonly NodeJS.Signals[];
  /** Injected for tests; default `process`. */
  process?: Pick<NodeJS.Process, 'on' | 'off'>;
  exit?: (code: number) => void;
}

export interface Shutdown {
  /** Aborted when shutdown starts; pass it to loops, waits and the leader elector. */
  readonly signal: AbortSignal;
  /**
   * Registers a step. Steps run in ascending `phase`, steps of one phase concurrently. The
   * usual order: 20 drain queues, 25 stop other writers, 27 release the Lease (after the last
   * write), 30 stop informers, 40 close Cloud Map client, 50 close the health server.
   */
  onShutdown(name: string, phase: number, step: () => Promise<void> | void): void;
  /**
   * Starts shutdown from code; resolves when every step has run. With `exitCode` the process
   * then exits with it (1 if a step failed), as a lost Lease should: `shutdown('lost
   * leadership', 1)` lets the Pod restart instead of idling without work.
   */
  shutdown(reason: string, exitCode?: number): Promise<void>;
  /** Stops listening for signals (tests). */
  dispose(): void;
}

/**
 * Graceful shutdown on SIGTERM/SIGINT: abort the signal, run the steps in phase order, then
 * exit 0; a step that throws is logged and the rest still run (then exit 1). A second signal
 * or the timeout exits at once with 1.
 */
export function createShutdown(options: ShutdownOptions): Shutdown {
  const proc = options.process ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.logger;
  const controller = new AbortController();
  const steps: { name: string; phase: number; step: () => Promise<void> | void }[] = [];
  let running: Promise<void> | undefined;

  const run = async (reason: string): Promise<boolean> => {
    log.info('shutting down', { [logFields.reason]: reason });
    controller.abort(new Error(`shutdown: ${reason}`));
    let ok = true;
    const phases = [...new Set(steps.map((s) => s.phase))].sort((a, b) => a - b);
    for (const phase of phases) {
      await Promise.all(
        steps
          .filter((s) => s.phase === phase)
          .map(async (s) => {
            try {
              await s.step();
            } catch (error) {
              ok = false;
              log.error('shutdown step failed', {
                [logFields.name]: s.name,
                [logFields.error]: error,
              });
            }
          }),
      );
    }
    log.info('shutdown complete');
    return ok;
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (running !== undefined) {
      log.warn('second signal, exiting now', { [logFields.signal]: signal });
      exit(1);
      return;
    }
    const timer = setTimeout(() => {
      log.error('shutdown timed out, exiting');
      exit(1);
    }, options.timeoutMs ?? 30_000);
    timer.unref();
    running = run(signal).then((ok) => {
      clearTimeout(timer);
      exit(ok ? 0 : 1);
    });
  };
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const listeners = signals.map((s) => [s, () => onSignal(s)] as const);
  for (const [s, l] of listeners) proc.on(s, l);

  return {
    signal: controller.signal,
    onShutdown: (name, phase, step) => void steps.push({ name, phase, step }),
    shutdown(reason, exitCode) {
      running ??= run(reason).then((ok) => {
        if (exitCode !== undefined) exit(ok ? exitCode : 1);
      });
      return running;
    },
    dispose() {
      for (const [s, l] of listeners) proc.off(s, l);
    },
  };
}
