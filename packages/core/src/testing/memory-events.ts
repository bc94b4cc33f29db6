import type { EventRecorder, RecordedEvent } from '../ports/events.js';

export interface MemoryEventRecorder extends EventRecorder {
  readonly events: RecordedEvent[];
  /** Events about one object (`namespace/name`), optionally of one reason. */
  about(key: string, reason?: string): RecordedEvent[];
}

export function createMemoryEventRecorder(): MemoryEventRecorder {
  const events: RecordedEvent[] = [];
  return {
    events,
    record: (e) => void events.push(structuredClone(e)),
    about: (key, reason) =>
      events.filter(
        (e) =>
          `${e.regarding.namespace ?? ''}/${e.regarding.name}` === key &&
          (reason === undefined || e.reason === reason),
      ),
  };
}
