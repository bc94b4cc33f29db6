// Oversize and junk attributes (within what Cloud Map itself accepts), and the log volume
// refusals cause.
import { setTimeout as sleep } from 'node:timers/promises';
import { DiscoveryV1Api } from '@kubernetes/client-node';
import { Attr } from '@cloudmap-mcs/core';
import type { Scenario } from '../scenario.js';
import { controlSeen, hostileInstances, refused, writeAll } from './hostile.js';
import { serviceImport } from '../kube.js';

const long = (n: number, c = 'a'): string => c.repeat(n);

export const oversizeAttributes: Scenario = {
  id: 'hostile-oversize-attributes',
  fault:
    'records with 1,000-character hostname, node name, zone and port name, a 1,000-character exported label, 30 junk attributes',
  expected:
    'the bad fields and entries dropped (counted), the endpoint and service still imported, nothing oversize reaches Kubernetes, the agent keeps running',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    await ctx.keepAlive(ns, 'c9');
    const instances = hostileInstances(ns, 'bloated', 'c9', [], {
      exportedLabels: { team: 'x' },
    });
    for (const i of instances) {
      if (i.attributes[Attr.Record] === 'endpoint') {
        i.attributes[Attr.Hostname] = long(1000, 'h');
        i.attributes[Attr.NodeName] = long(1000, 'n');
        i.attributes[Attr.Zone] = long(1000, 'z');
      }
      if (i.attributes[Attr.Record] === 'export') {
        i.attributes[Attr.ExportedLabels] = JSON.stringify({ team: long(1000, 'l') });
      }
    }
    // A second endpoint, from an unmodified copy: a junk-filled port name and 30 attributes.
    const fresh = hostileInstances(ns, 'bloated', 'c9', [])[1]!;
    const junk = { id: 'junk-0', attributes: { ...fresh.attributes } };
    junk.attributes[Attr.Ipv4] = '10.9.0.2';
    junk.attributes[Attr.EndpointPortName] = long(1000, 'p');
    for (let k = 0; Object.keys(junk.attributes).length < 30; k++)
      junk.attributes[`JUNK_${String(k)}`] = long(100, 'j');
    await writeAll(ctx, ns, 'bloated', [...instances, junk]);
    const importers = await ctx.importers();
    await controlSeen(ctx, ns, 'bloated', 'c9');
    const problems: string[] = [];
    for (const c of ctx.clusters) {
      const slices = await c.kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
        namespace: ns,
        labelSelector: 'multicluster.kubernetes.io/service-name=bloated',
      });
      for (const s of slices.items) {
        for (const p of s.ports ?? [])
          if ((p.name ?? '').length > 63)
            problems.push(`${c.name} port name of ${String(p.name?.length)}`);
        for (const e of s.endpoints ?? []) {
          if ((e.hostname ?? '').length > 63)
            problems.push(`${c.name} hostname of ${String(e.hostname?.length)}`);
          if ((e.nodeName ?? '').length > 253)
            problems.push(`${c.name} nodeName of ${String(e.nodeName?.length)}`);
          if ((e.zone ?? '').length > 63)
            problems.push(`${c.name} zone of ${String(e.zone?.length)}`);
        }
      }
      const si = (await serviceImport(c, ns, 'bloated')) as
        { metadata: { labels?: Record<string, string> } } | undefined;
      const label = si?.metadata.labels?.['team'];
      if (label !== undefined && label.length > 63)
        problems.push(`${c.name} label of ${String(label.length)}`);
    }
    const counted = await refused(importers);
    const alive = importers.every((a) => a.running);
    out.figure('oversize fields in Kubernetes', problems.length);
    out.figure('refusals counted', counted);
    out.observe(
      problems.length === 0
        ? `imported without the oversize fields; ${counted} refusals counted`
        : `reached Kubernetes: ${problems.join(', ')}`,
    );
    out.check(problems.length === 0, problems.join(', '));
    out.check(counted > 0, 'no refusal counted');
    out.check(alive, 'an import agent exited');
  },
};

export const refusalLogRate: Scenario = {
  id: 'refusal-log-rate',
  fault: 'hostile records stay in a service that keeps changing (a reconcile every second or so)',
  expected:
    'each distinct refusal logged once per interval, not on every reconcile; every refusal still counted',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    await ctx.keepAlive(ns, 'c9');
    const bad = ['169.254.169.254', '127.0.0.1', '0.0.0.0', '224.0.0.1'];
    await writeAll(ctx, ns, 'noisy', hostileInstances(ns, 'noisy', 'c9', bad));
    const importers = await ctx.importers();
    await controlSeen(ctx, ns, 'noisy', 'c9');
    const lines = () => importers.reduce((n, a) => n + a.logLines('refused'), 0);
    const l0 = lines();
    const r0 = await refused(importers);
    const windowS = ctx.profile.name === 'long' ? 60 : 10;
    const until = Date.now() + windowS * 1000;
    for (let k = 0; Date.now() < until; k++) {
      // A changing control endpoint makes every import agent reconcile the service again.
      await writeAll(ctx, ns, 'noisy', [
        {
          id: 'churn',
          attributes: {
            ...hostileInstances(ns, 'noisy', 'c9', [])[1]!.attributes,
            [Attr.Ipv4]: `10.9.1.${String((k % 200) + 1)}`,
          },
        },
      ]);
      await sleep(1_000);
    }
    const logged = lines() - l0;
    const counted = (await refused(importers)) - r0;
    const allowed = bad.length * importers.length;
    out.figure('window s', windowS);
    out.figure('refusals counted', counted);
    out.figure('refusal log lines', logged);
    out.observe(`${logged} refusal log lines and ${counted} refusals counted in ${windowS} s`);
    out.check(counted > 0, 'the refusals were not counted on reconcile');
    out.check(
      logged <= allowed,
      `${logged} log lines for ${bad.length} distinct refusals × ${importers.length} agents`,
    );
  },
};
