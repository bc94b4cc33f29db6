import { BlockList, isIP } from 'node:net';
import type { AddressRefusal, LocalAddressCheck } from './address-policy.js';
import { parseCidr } from './address-policy.js';

/**
 * The importing cluster's own addresses, refused as imported endpoints whatever
 * `--allowed-cidrs` says (issue 11 item 4): its Service CIDRs (the API server's
 * `10.x.0.1` included) and its nodes' addresses. A record pointing there would steer this
 * cluster's clusterset traffic to its own Services or its nodes' host ports. Kept current by
 * the agent (import-agent src/kube/local-addresses.ts); replaced wholesale on each refresh.
 */
export interface LocalAddresses extends LocalAddressCheck {
  /** CIDRs such as `10.96.0.0/12`; single IPs are accepted as /32 or /128. */
  setServiceCidrs(cidrs: readonly string[]): void;
  setNodeAddresses(addresses: readonly string[]): void;
  /** What is refused now, for logs and tests. */
  snapshot(): { serviceCidrs: string[]; nodeAddresses: string[] };
}

function blockOf(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const family = isIP(c);
    if (family !== 0) {
      list.addAddress(c, family === 4 ? 'ipv4' : 'ipv6');
      continue;
    }
    const { network, prefix, family: f } = parseCidr(c);
    list.addSubnet(network, prefix, f === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

export function createLocalAddresses(): LocalAddresses {
  let serviceCidrs: string[] = [];
  let nodeAddresses: string[] = [];
  let services = new BlockList();
  let nodes = new BlockList();
  return {
    setServiceCidrs(cidrs) {
      serviceCidrs = [...new Set(cidrs)].sort();
      services = blockOf(serviceCidrs);
    },
    setNodeAddresses(addresses) {
      nodeAddresses = [...new Set(addresses.filter((a) => isIP(a) !== 0))].sort();
      // A BlockList, so any text form of an address (IPv6 zeros) matches.
      nodes = blockOf(nodeAddresses);
    },
    refuse(address, family): AddressRefusal | undefined {
      if (services.check(address, family)) return 'local-service-cidr';
      if (nodes.check(address, family)) return 'local-node';
      return undefined;
    },
    snapshot: () => ({ serviceCidrs: [...serviceCidrs], nodeAddresses: [...nodeAddresses] }),
  };
}
