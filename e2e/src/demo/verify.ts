/**
 * What the demo waits for, as a pure evaluation of what it observed in each cluster: the
 * ServiceImport exists with a clusterset IP, lists every exporting cluster, and the imported
 * EndpointSlices hold every ready endpoint of every exporting cluster.
 */

export interface ObservedImport {
  type: string;
  ips: string[];
  clusters: string[];
}

export interface ClusterObservation {
  cluster: string;
  /** Ready pods behind the exported Service in this cluster (what it exports). */
  exportedEndpoints: number;
  /** ServiceExport conditions of this cluster, type → status. */
  exportConditions: Record<string, string>;
  serviceImport: ObservedImport | undefined;
  /** Ready endpoint addresses of the imported EndpointSlices, per source cluster. */
  importedEndpoints: Record<string, number>;
  /** The derived Service's ClusterIP, when it exists. */
  derivedServiceIp: string | undefined;
}

/** Everything still missing, in words; empty once the demo's goal holds. */
export function missing(observations: readonly ClusterObservation[], service: string): string[] {
  const out: string[] = [];
  const exporters = observations.filter((o) => o.exportedEndpoints > 0);
  for (const o of observations)
    if (o.exportedEndpoints === 0) out.push(`${o.cluster}: the ${service} pods are not ready yet`);
    else if (o.exportConditions['Ready'] !== 'True')
      out.push(
        `${o.cluster}: ServiceExport ${service} is not Ready yet (${o.exportConditions['Ready'] ?? 'no condition'})`,
      );
  for (const o of observations) {
    const si = o.serviceImport;
    if (si === undefined) {
      out.push(`${o.cluster}: no ServiceImport ${service} yet`);
      continue;
    }
    if (si.type === 'ClusterSetIP' && si.ips.length === 0)
      out.push(`${o.cluster}: ServiceImport ${service} has no clusterset IP yet`);
    for (const e of exporters) {
      if (!si.clusters.includes(e.cluster))
        out.push(`${o.cluster}: ServiceImport ${service} does not list ${e.cluster} yet`);
      const got = o.importedEndpoints[e.cluster] ?? 0;
      if (got !== e.exportedEndpoints)
        out.push(
          `${o.cluster}: ${got}/${e.exportedEndpoints} endpoints imported from ${e.cluster}`,
        );
    }
  }
  return out;
}
