import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeOciArchive, type OciImage, type OciImageSpec } from './oci.js';

/**
 * The images real nodes run, built locally from the harness's own binaries and Debian's
 * busybox-static and socat, and imported into each node's containerd (nothing is pulled;
 * pods use `imagePullPolicy: Never` or IfNotPresent). `alpine/socat` and `nicolaka/netshoot`
 * are STAND-INS named as the upstream MCS conformance suite expects: they hold only what the
 * suite runs (sh, socat, our nc, nslookup from busybox), not the upstream images' contents; so is
 * `agnhost` (our echo server answers what the demo sample asks of `netexec`).
 */
export const nodeImageRefs = {
  pause: 'cloudmap-mcs.local/pause:1',
  coredns: 'cloudmap-mcs.local/coredns:1',
  echo: 'cloudmap-mcs.local/echo:1',
  busybox: 'cloudmap-mcs.local/busybox:1',
  socat: 'docker.io/alpine/socat:1.7.4.4',
  netshoot: 'docker.io/nicolaka/netshoot:v0.15',
  /** The echo program again, standing in for agnhost's netexec in samples/demo/demo.yaml. */
  agnhost: 'registry.k8s.io/e2e-test-images/agnhost:2.53',
} as const;
export type NodeImage = keyof typeof nodeImageRefs;

/** Paths of the node binaries (e2e/nodes/build.sh output) the images are made of. */
export interface NodeImageBinaries {
  readonly pause: string;
  readonly coredns: string;
  readonly echo: string;
  /** OpenBSD-netcat-like `nc` (e2e/nodes/progs/nc): busybox's has no -4/-6/-v/-u. */
  readonly nc: string;
}

const busyboxPath = '/bin/busybox';
const socatPath = '/usr/bin/socat';

function place(rootfs: string, from: string, to: string): void {
  const dest = join(rootfs, to);
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(from, dest);
}

function skeleton(rootfs: string): void {
  for (const d of ['etc', 'tmp', 'proc', 'sys', 'dev', 'var/run']) {
    mkdirSync(join(rootfs, d), { recursive: true });
  }
  writeFileSync(
    join(rootfs, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n',
  );
  writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
}

/** busybox-static and a symlink per applet (sh, nc, nslookup, wget, ...) in /bin. */
function addBusybox(rootfs: string): void {
  place(rootfs, busyboxPath, 'bin/busybox');
  const applets = execFileSync(busyboxPath, ['--list'], { encoding: 'utf8' }).split('\n');
  for (const applet of applets.map((a) => a.trim())) {
    if (applet === '' || applet === 'busybox') continue;
    const link = join(rootfs, 'bin', applet);
    if (!existsSync(link)) symlinkSync('busybox', link);
  }
}

/** A dynamically linked Debian binary with the shared libraries ldd names, at their paths. */
function addDynamic(rootfs: string, binary: string, to: string): void {
  place(rootfs, binary, to);
  const ldd = execFileSync('ldd', [binary], { encoding: 'utf8' });
  for (const m of ldd.matchAll(/(\/\S+) \(0x[0-9a-f]+\)/g)) {
    const lib = m[1]!;
    place(rootfs, lib, lib.slice(1));
  }
}

const addSocat = (rootfs: string): void => addDynamic(rootfs, socatPath, 'usr/bin/socat');

/**
 * busybox's sh runs its own applets before searching PATH, so the nc stand-in would never be
 * found: the netshoot stand-in's /bin/sh is Debian's dash instead.
 */
function addDash(rootfs: string): void {
  rmSync(join(rootfs, 'bin/sh'), { force: true });
  addDynamic(rootfs, '/bin/dash', 'bin/sh');
}

/**
 * Debian's busybox-static `wget` crashes (SIGSEGV at start), so the netshoot stand-in gets a
 * `curl` for plain HTTP GETs, backed by socat: `curl [-s] [-m SECS] http://HOST[:PORT]/PATH`
 * prints the body; exit 7 when the connection fails, 22 on a status other than 2xx.
 */
const curlScript = `#!/bin/sh
# curl stand-in (cloudmap-mcs harness): curl [-s] [-4|-6] [-m SECS] http://HOST[:PORT][/PATH]
# HOST may be a name, an IPv4 address or an IPv6 address in brackets; -4/-6 pick the family a
# name resolves to (A or AAAA), as curl's do.
timeout=5
tcp=TCP
while [ $# -gt 1 ]; do
  case "$1" in
    -s|-sS|-f|-fsS) ;;
    -4) tcp=TCP4 ;;
    -6) tcp=TCP6 ;;
    -m|--max-time) shift; timeout=$1 ;;
    *) echo "curl: unsupported option $1" >&2; exit 2 ;;
  esac
  shift
done
url=\${1#http://}
hostport=\${url%%/*}
path=/\${url#*/}
[ "$url" = "$hostport" ] && path=/
case "$hostport" in
  '['*) host=\${hostport%%]*}]; port=\${hostport#*]}; port=\${port#:} ;;
  *) host=\${hostport%%:*}; port=\${hostport#*:}; [ "$port" = "$hostport" ] && port= ;;
esac
[ -n "$port" ] || port=80
resp=$(printf 'GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$hostport" |
  socat -T "$timeout" - "$tcp:$host:$port,connect-timeout=$timeout" | tr -d '\r') || exit 7
[ -n "$resp" ] || exit 7
status=$(printf '%s\n' "$resp" | head -n 1)
printf '%s\n' "$resp" | sed '1,/^$/d'
case "$status" in "HTTP/1."?" 2"*) exit 0 ;; *) exit 22 ;; esac
`;

function addScript(rootfs: string, name: string, text: string): void {
  const path = join(rootfs, 'usr/local/bin', name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o755 });
}

function specs(bins: NodeImageBinaries, work: string): Record<NodeImage, OciImageSpec> {
  const root = (name: string, fill: (dir: string) => void): string => {
    const dir = join(work, name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    skeleton(dir);
    fill(dir);
    return dir;
  };
  const single = (bin: string) => (dir: string) => place(dir, bin, basename(bin));
  return {
    pause: {
      reference: nodeImageRefs.pause,
      rootfs: root('pause', single(bins.pause)),
      entrypoint: ['/pause'],
    },
    coredns: {
      reference: nodeImageRefs.coredns,
      rootfs: root('coredns', single(bins.coredns)),
      entrypoint: ['/coredns'],
    },
    echo: {
      reference: nodeImageRefs.echo,
      rootfs: root('echo', single(bins.echo)),
      entrypoint: ['/echo'],
    },
    agnhost: {
      reference: nodeImageRefs.agnhost,
      rootfs: root('agnhost', single(bins.echo)),
      entrypoint: ['/echo'],
    },
    busybox: { reference: nodeImageRefs.busybox, rootfs: root('busybox', addBusybox), cmd: ['sh'] },
    socat: {
      reference: nodeImageRefs.socat,
      rootfs: root('socat', (d) => {
        addBusybox(d);
        addSocat(d);
      }),
      entrypoint: ['socat'],
    },
    netshoot: {
      reference: nodeImageRefs.netshoot,
      rootfs: root('netshoot', (d) => {
        addBusybox(d);
        addSocat(d);
        // First on PATH: the suite runs `echo hi | nc -v -w 2 -4 HOST PORT` and needs the
        // reply; see e2e/nodes/progs/nc for why it does not half-close like socat would.
        place(d, bins.nc, 'usr/local/bin/nc');
        addScript(d, 'curl', curlScript);
        // GNU date (busybox's has no %N): the demo times DNS answers and requests in the pod.
        addDynamic(d, '/bin/date', 'usr/local/bin/date');
        addDash(d);
      }),
      cmd: ['sh'],
    },
  };
}

/** Builds every node image into `outDir` as `<name>.tar` (OCI archives for `ctr images import`). */
export function buildNodeImages(bins: NodeImageBinaries, outDir: string): OciImage[] {
  const work = join(outDir, 'rootfs');
  mkdirSync(work, { recursive: true });
  try {
    return Object.entries(specs(bins, work)).map(([name, spec]) =>
      writeOciArchive(spec, join(outDir, `${name}.tar`)),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
