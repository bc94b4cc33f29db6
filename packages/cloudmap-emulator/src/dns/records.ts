/**
 * The DNS records Route 53 auto naming keeps for the emulator's DNS namespaces, derived from
 * the state on every query (no second copy to keep in step), and the answer to one question.
 *
 * Per service with DnsConfig and per registered instance (RegisterInstance and DnsRecord docs):
 * - A / AAAA at `<service>.<namespace>` from AWS_INSTANCE_IPV4 / AWS_INSTANCE_IPV6;
 * - SRV at `<service>.<namespace>`: `1 1 <AWS_INSTANCE_PORT> <instance-id>.<service>.<namespace>`,
 *   plus A / AAAA at `<instance-id>.<service>.<namespace>` for whichever addresses it has;
 * - CNAME at `<service>.<namespace>` from AWS_INSTANCE_CNAME.
 * Routing (DnsConfig.RoutingPolicy and the Route 53 routing docs): MULTIVALUE answers up to 8
 * healthy records, or up to 8 of all when none is healthy; WEIGHTED answers one healthy record,
 * or one of all when none is healthy. Without a health check every instance counts as healthy.
 * Alias records (AWS_ALIAS_DNS_NAME) are not served: there is no load balancer behind them.
 */
import type { EmulatorState, InstanceRecord, NamespaceRecord, ServiceRecord } from '../model.js';
import { RCode, RRType, type Answer, type RData, type ResourceRecord } from './wire.js';

/** Route 53's multivalue answers carry at most this many records. */
const MULTIVALUE_MAX = 8;

type Pick = <T>(items: T[], count: number) => T[];

/** A uniformly random subset in random order (partial Fisher–Yates); the default picker. */
const randomPick: Pick = (items, count) => {
  const copy = [...items];
  const n = Math.min(count, copy.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
};

/** One record before routing: the instance it came from decides its health. */
interface Candidate {
  data: RData;
  ttl: number;
  healthy: boolean;
}

/** Owner name (lower case, relative to the zone apex, '' = apex) → type → candidates. */
type ZoneView = Map<string, Map<number, { routing: string; records: Candidate[] }>>;

const isDnsNamespace = (ns: NamespaceRecord): boolean =>
  ns.type === 'DNS_PRIVATE' || ns.type === 'DNS_PUBLIC';

function healthy(svc: ServiceRecord, inst: InstanceRecord): boolean {
  if (svc.healthCheckCustomConfig) return (inst.customHealth ?? 'HEALTHY') === 'HEALTHY';
  // Route 53 health checks always pass in the emulator; no health check means healthy.
  return true;
}

const PORT = /^\d{1,5}$/;

function addTo(
  view: ZoneView,
  owner: string,
  type: number,
  routing: string,
  candidate: Candidate,
): void {
  let byType = view.get(owner);
  if (!byType) view.set(owner, (byType = new Map()));
  let set = byType.get(type);
  if (!set) byType.set(type, (set = { routing, records: [] }));
  set.records.push(candidate);
}

/** Every record of one namespace's services (`owner` names relative to the apex). */
function zoneView(state: EmulatorState, ns: NamespaceRecord): ZoneView {
  const view: ZoneView = new Map();
  for (const svc of Object.values(state.services)) {
    if (svc.namespaceId !== ns.id || !svc.dnsConfig) continue;
    const routing = svc.dnsConfig.RoutingPolicy ?? 'MULTIVALUE';
    const name = svc.name.toLowerCase();
    const ttlOf = new Map(svc.dnsConfig.DnsRecords.map((r) => [r.Type, r.TTL]));
    for (const inst of Object.values(state.instances[svc.id] ?? {})) {
      const a = inst.attributes;
      const ok = healthy(svc, inst);
      const add = (owner: string, type: number, data: RData, ttl: number): void =>
        addTo(view, owner, type, routing, { data, ttl, healthy: ok });
      const ipv4 = a['AWS_INSTANCE_IPV4'];
      const ipv6 = a['AWS_INSTANCE_IPV6'];
      if (ttlOf.has('A') && ipv4)
        add(name, RRType.A, { type: 'A', address: ipv4 }, ttlOf.get('A')!);
      if (ttlOf.has('AAAA') && ipv6)
        add(name, RRType.AAAA, { type: 'AAAA', address: ipv6 }, ttlOf.get('AAAA')!);
      const cname = a['AWS_INSTANCE_CNAME'];
      if (ttlOf.has('CNAME') && cname)
        add(name, RRType.CNAME, { type: 'CNAME', target: cname }, ttlOf.get('CNAME')!);
      const port = a['AWS_INSTANCE_PORT'];
      const host = `${inst.id.toLowerCase()}.${name}`;
      const labelsOk = inst.id.split('.').every((l) => l.length > 0 && l.length <= 63);
      if (ttlOf.has('SRV') && port && PORT.test(port) && (ipv4 || ipv6) && labelsOk) {
        const ttl = ttlOf.get('SRV')!;
        const target = { prefix: inst.id.split('.'), suffixLabels: -1 };
        add(name, RRType.SRV, { type: 'SRV', priority: 1, weight: 1, port: +port, target }, ttl);
        if (ipv4) add(host, RRType.A, { type: 'A', address: ipv4 }, ttl);
        if (ipv6) add(host, RRType.AAAA, { type: 'AAAA', address: ipv6 }, ttl);
      }
    }
  }
  return view;
}

/** MULTIVALUE: ≤8 healthy, else ≤8 of all; WEIGHTED: one healthy, else one of all. */
function route(set: { routing: string; records: Candidate[] }, pick: Pick): Candidate[] {
  const healthySet = set.records.filter((r) => r.healthy);
  const pool = healthySet.length > 0 ? healthySet : set.records;
  return pick(pool, set.routing === 'WEIGHTED' ? 1 : MULTIVALUE_MAX);
}

/** The namespace whose name is the longest suffix of `labels` (lower case), if any. */
function zoneOf(
  state: EmulatorState,
  labels: string[],
): { ns: NamespaceRecord; relative: string[] } | undefined {
  let best: { ns: NamespaceRecord; relative: string[] } | undefined;
  for (const ns of Object.values(state.namespaces)) {
    if (!isDnsNamespace(ns)) continue;
    const zone = ns.name.toLowerCase().replace(/\.$/, '').split('.');
    if (zone.length > labels.length) continue;
    if (zone.every((l, i) => labels[labels.length - zone.length + i] === l)) {
      if (!best || zone.length > labels.length - best.relative.length) {
        best = { ns, relative: labels.slice(0, labels.length - zone.length) };
      }
    }
  }
  return best;
}

/** Route 53's SOA for its hosted zones, with the namespace's SOA TTL. */
function soa(ns: NamespaceRecord, zoneLabels: number): ResourceRecord {
  return {
    owner: { prefix: [], suffixLabels: zoneLabels },
    ttl: ns.soaTtl ?? 15,
    data: {
      type: 'SOA',
      mname: 'ns-1536.awsdns-00.co.uk',
      rname: 'awsdns-hostmaster.amazon.com',
      serial: 1,
      refresh: 7200,
      retry: 900,
      expire: 1209600,
      minimum: 86400,
    },
  };
}

/**
 * The authoritative answer for one question. Names outside every DNS namespace are REFUSED
 * (the emulator serves only its own zones, like a Route 53 private hosted zone's resolver
 * does not forward); a name with no records but with records below it is NOERROR and empty;
 * a name with neither is NXDOMAIN. Negative answers carry the zone's SOA.
 */
export function answerQuestion(
  state: EmulatorState,
  questionLabels: string[],
  qtype: number,
  pick: Pick = randomPick,
): Answer {
  const labels = questionLabels.map((l) => l.toLowerCase());
  const zone = zoneOf(state, labels);
  if (!zone) return { rcode: RCode.REFUSED, answers: [], authority: [] };
  const zoneLabels = labels.length - zone.relative.length;
  const negative = (rcode: number): Answer => ({
    rcode,
    answers: [],
    authority: [soa(zone.ns, zoneLabels)],
  });
  if (zone.relative.length === 0) {
    return qtype === RRType.SOA || qtype === RRType.ANY
      ? { rcode: RCode.NOERROR, answers: [soa(zone.ns, zoneLabels)], authority: [] }
      : negative(RCode.NOERROR);
  }
  const owner = zone.relative.join('.');
  const view = zoneView(state, zone.ns);
  const byType = view.get(owner);
  if (!byType) {
    const below = [...view.keys()].some((k) => k.endsWith(`.${owner}`));
    return negative(below ? RCode.NOERROR : RCode.NXDOMAIN);
  }
  // A CNAME answers every type at its name (there can be nothing else there).
  const types =
    qtype === RRType.ANY ? [...byType.keys()] : byType.has(RRType.CNAME) ? [RRType.CNAME] : [qtype];
  const answers: ResourceRecord[] = [];
  for (const type of types) {
    const set = byType.get(type);
    if (!set) continue;
    for (const c of route(set, pick)) {
      const data =
        c.data.type === 'SRV'
          ? { ...c.data, target: { prefix: c.data.target.prefix, suffixLabels: labels.length } }
          : c.data;
      answers.push({ owner: { prefix: [], suffixLabels: labels.length }, ttl: c.ttl, data });
    }
  }
  return answers.length > 0 ? { rcode: RCode.NOERROR, answers, authority: [] } : negative(0);
}
