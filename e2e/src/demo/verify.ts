/**
 * What the demo waits for, as a pure evaluation of what it observed in each cluster: the
 * ServiceImport exists with a clusterset IP, lists every exporting cluster, and the imported
 * EndpointSlices hold every ready endpoint of every exporting cluster, in each IP family the
 * exported Service has (a dual-stack Service is imported as one slice per family).
 */

export type IpFamily = 'IPv4' | 'IPv6';

export interface ObservedImport {
  type: string;
  ips: string[];
  clusters: string[];
}

export interface ClusterObservation {
  cluster: string;
  /** Ready pods behind the exported Service in this cluster (what it exports). */
  exportedEndpoints: number;
  /** The IP families of the exported Service here (its spec.ipFamilies). */
  exportedFamilies: IpFamily[];
  /** ServiceExport conditions of this cluster, type → status. */
  exportConditions: Record<string, string>;
  serviceImport: ObservedImport | undefined;
  /** Ready endpoint addresses of the imported EndpointSlices, per source cluster and family. */
  importedEndpoints: Record<string, Partial<Record<IpFamily, number>>>;
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
      // Each family separately: on dual stack every pod is one address in each family's
      // slice, and an importer holding only one of them has not converged.
      const dual = e.exportedFamilies.length > 1;
      for (const family of e.exportedFamilies) {
        const got = o.importedEndpoints[e.cluster]?.[family] ?? 0;
        if (got !== e.exportedEndpoints)
          out.push(
            `${o.cluster}: ${got}/${e.exportedEndpoints} ${dual ? `${family} ` : ''}endpoints imported from ${e.cluster}`,
          );
      }
    }
  }
  return out;
}
