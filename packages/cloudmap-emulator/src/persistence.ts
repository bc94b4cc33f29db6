import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Engine } from './engine.js';
import type { EmulatorState } from './model.js';

export class StateFileError extends Error {
  constructor(path: string, reason: string) {
    super(`Cannot use state file ${path}: ${reason}`);
    this.name = 'StateFileError';
  }
}

/**
 * Optional persistence: the whole state as one JSON file, written atomically (temp file and
 * rename) shortly after each change and on stop, so a killed emulator loses at most the last
 * few milliseconds and never leaves a torn file.
 */
export class StateFile {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly path: string,
    private readonly engine: Engine,
    private readonly debounceMs = 20,
  ) {}

  load(): void {
    if (!existsSync(this.path)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch (err) {
      throw new StateFileError(this.path, `not JSON (${(err as Error).message})`);
    }
    if (!parsed || typeof parsed !== 'object' || (parsed as { version?: unknown }).version !== 1) {
      throw new StateFileError(this.path, 'not an emulator state of version 1');
    }
    this.engine.state = parsed as EmulatorState;
    this.engine.dirty = false;
  }

  /** Called after every request; writes only when something changed. */
  changed(): void {
    if (!this.engine.dirty || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.debounceMs);
  }

  save(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.engine.state));
    renameSync(tmp, this.path);
    this.engine.dirty = false;
  }
}
