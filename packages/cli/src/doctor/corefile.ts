/**
 * CoreDNS configured for clusterset.local (pure): the Corefile must enable multicluster for
 * the zone, either inside the `kubernetes` plugin (CoreDNS >= 1.12.2, whose zones must then
 * include clusterset.local) or with the external coredns/multicluster plugin, in a server
 * block that serves the zone.
 */
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

const ZONE = 'clusterset.local';
const SUBJECT = 'CoreDNS clusterset.local';

const COREFILE_FIX = [
  'edit the Corefile (kubectl -n kube-system edit configmap coredns) so the kubernetes plugin',
  'serves clusterset.local with multicluster enabled (CoreDNS >= 1.12.2), for example:',
  '    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {',
  '        multicluster clusterset.local',
  '        ...',
  '    }',
  'and give CoreDNS list/watch on serviceimports.multicluster.x-k8s.io (see samples/coredns).',
].join('\n');

interface Directive {
  name: string;
  args: string[];
  /** Directive names of the enclosing blocks, outermost (the server block key) first. */
  parents: string[];
}

/** Tokenises a Corefile into directives with their enclosing blocks; comments dropped. */
function parseCorefile(text: string): Directive[] {
  const out: Directive[] = [];
  const stack: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const closes = line.startsWith('}');
    if (closes) stack.pop();
    const body = (closes ? line.slice(1) : line).trim();
    if (body === '') continue;
    const opens = body.endsWith('{');
    const words = (opens ? body.slice(0, -1) : body).trim().split(/\s+/).filter(Boolean);
    const [name, ...args] = words;
    if (name !== undefined) out.push({ name, args, parents: [...stack] });
    if (opens) stack.push(stack.length === 0 ? words.join(' ') : (name ?? ''));
  }
  return out;
}

/** A server block key like `.:53`, `clusterset.local:53` or `.` covers the zone. */
const serverCovers = (key: string) =>
  key
    .split(/[\s,]+/)
    .map((k) => k.replace(/^dns:\/\//, '').replace(/:\d+$/, ''))
    .some((z) => z === '.' || z === ZONE || z === `${ZONE}.`);

const hasZone = (args: string[]) => args.some((a) => a === ZONE || a === `${ZONE}.`);

/** `v1.12.2` / `1.11.3-eksbuild.1` → [1, 12, 2]; undefined when the tag is not a version. */
function coreDnsVersion(image: string): [number, number, number] | undefined {
  const tag = image.slice(image.lastIndexOf(':') + 1);
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(tag);
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])];
}

const MIN_MULTICLUSTER: [number, number, number] = [1, 12, 2];
const older = (a: readonly number[], b: readonly number[]) => {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
};

/**
 * The Corefile check, plus the CoreDNS version when its image is known: the kubernetes
 * plugin's `multicluster` option needs CoreDNS >= 1.12.2 (older versions refuse the Corefile).
 */
export function checkCoreDns(
  corefile: string | undefined,
  where: string,
  image: string | undefined,
): CheckResult {
  const result = checkCorefile(corefile, where);
  if (
    result.status !== 'ok' ||
    image === undefined ||
    !result.message.startsWith('kubernetes plugin')
  )
    return result;
  const version = coreDnsVersion(image);
  if (version === undefined || !older(version, MIN_MULTICLUSTER))
    return { ...result, message: `${result.message}, image ${image}` };
  return problem(
    'coredns',
    SUBJECT,
    'fail',
    `CoreDNS ${version.join('.')} (${image}) predates the kubernetes plugin's multicluster option (1.12.2); it will not load this Corefile`,
    'upgrade CoreDNS to 1.12.2 or later (e.g. registry.k8s.io/coredns/coredns:v1.12.2; on EKS a CoreDNS add-on version based on 1.12.2+), or use a CoreDNS build with the coredns/multicluster plugin',
  );
}

function checkCorefile(corefile: string | undefined, where: string): CheckResult {
  if (corefile === undefined)
    return problem('coredns', SUBJECT, 'fail', `no Corefile found (${where})`, COREFILE_FIX);
  const directives = parseCorefile(corefile);
  const multi = directives.filter((d) => d.name === 'multicluster' && hasZone(d.args));
  if (multi.length === 0)
    return problem(
      'coredns',
      SUBJECT,
      'fail',
      `the Corefile (${where}) has no \`multicluster ${ZONE}\``,
      COREFILE_FIX,
    );
  for (const d of multi) {
    const server = d.parents[0] ?? '';
    if (!serverCovers(server)) continue;
    const inKubernetes = d.parents[d.parents.length - 1] === 'kubernetes';
    if (!inKubernetes)
      return ok('coredns', SUBJECT, `coredns/multicluster plugin serves ${ZONE} (${where})`);
    const kubernetes = directives.find(
      (k) => k.name === 'kubernetes' && k.parents.join('/') === d.parents.slice(0, -1).join('/'),
    );
    if (kubernetes !== undefined && hasZone(kubernetes.args))
      return ok(
        'coredns',
        SUBJECT,
        `kubernetes plugin serves ${ZONE} with multicluster (${where})`,
      );
    return problem(
      'coredns',
      SUBJECT,
      'fail',
      `\`multicluster ${ZONE}\` is inside a kubernetes block whose zones do not include ${ZONE}; CoreDNS refuses to start ("is not authoritative for the multicluster zone")`,
      COREFILE_FIX,
    );
  }
  return problem(
    'coredns',
    SUBJECT,
    'fail',
    `\`multicluster ${ZONE}\` is in a server block that does not serve ${ZONE}`,
    COREFILE_FIX,
  );
}

const CACHE_SUBJECT = 'CoreDNS cache of clusterset.local';

/** A `disable` zone argument covers clusterset.local: the root, `local` or the zone itself. */
const coversZone = (zone: string) => {
  const z = zone.replace(/\.$/, '');
  return z === '' || z === ZONE || ZONE.endsWith(`.${z}`);
};

const CACHE_EFFECTS: Record<'success' | 'denial', string> = {
  success:
    'a headless name keeps an answer read while the import agent was writing its EndpointSlices (one per source cluster and IP family), so it lacks endpoints',
  denial: 'a name asked before its ServiceImport existed stays NXDOMAIN after the import appears',
};

/**
 * The `cache` plugin of a server block serving clusterset.local keeps answers for up to the
 * records' TTL (30 s with `ttl 30`): unless its success and denial caches are disabled for the
 * zone, answers lag what the import agent wrote (samples/coredns disables both; the kubernetes
 * plugin answers from its informer cache at next to no cost). Undefined when no server block
 * serves the zone with multicluster (checkCoreDns reports that).
 */
export function checkCoreDnsCache(
  corefile: string | undefined,
  where: string,
): CheckResult | undefined {
  if (corefile === undefined) return undefined;
  const directives = parseCorefile(corefile);
  const servers = new Set(
    directives
      .filter((d) => d.name === 'multicluster' && hasZone(d.args))
      .map((d) => d.parents[0] ?? '')
      .filter(serverCovers),
  );
  if (servers.size === 0) return undefined;
  const missing = new Set<'success' | 'denial'>();
  for (const server of servers) {
    if (!directives.some((d) => d.name === 'cache' && d.parents.join('/') === server)) continue;
    const inCache = directives.filter((d) => d.parents[0] === server && d.parents[1] === 'cache');
    for (const kind of ['success', 'denial'] as const) {
      const disabled = inCache.some(
        (d) =>
          d.name === 'disable' &&
          d.args[0] === kind &&
          (d.args.length === 1 || d.args.slice(1).some(coversZone)),
      );
      if (!disabled) missing.add(kind);
    }
  }
  if (missing.size === 0)
    return ok(
      'coredns',
      CACHE_SUBJECT,
      `answered from the kubernetes plugin, not cached (${where})`,
    );
  const kinds = [...missing];
  return problem(
    'coredns',
    CACHE_SUBJECT,
    'warn',
    `the cache plugin (${where}) caches clusterset.local ${kinds.join(' and ')} answers for up to their TTL: ${kinds.map((k) => CACHE_EFFECTS[k]).join('; ')}`,
    [
      'add to the cache block of the server block serving clusterset.local (see samples/coredns):',
      ...kinds.map((k) => `    disable ${k} clusterset.local`),
    ].join('\n'),
  );
}
