import { createEventHub, type EventHub, type WatchedObject } from '@cloudmap-mcs/core';
import type { EndpointSliceObject } from '../src/k8s-types.js';
import type { ExportWatched } from '../src/watches.js';

/** An ExportWatched of hubs a test emits on, and lookups it overrides. */
export interface FakeWatched extends ExportWatched {
  serviceExports: EventHub<WatchedObject>;
  services: EventHub<WatchedObject>;
  endpointSlices: EventHub<WatchedObject>;
  pods: EventHub<WatchedObject>;
  identity: EventHub<unknown>;
  reads: EventHub<string>;
}

export function fakeWatched(over: Partial<ExportWatched> = {}): FakeWatched {
  return {
    serviceExports: createEventHub(),
    services: createEventHub(),
    endpointSlices: createEventHub(),
    pods: createEventHub(),
    identity: createEventHub(),
    reads: createEventHub(),
    exported: () => false,
    exportEventReady: () => true,
    slicesIn: (): EndpointSliceObject[] => [],
    serviceExportKeys: () => [],
    ...over,
  } as FakeWatched;
}
