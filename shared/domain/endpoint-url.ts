import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook endpoint may point (CONTRACT.md §14): `https://` on AWS, and never at an address
 * of ours or of the cloud, checked on every address its name resolves to (a public name may resolve
 * to 127.0.0.1). Locally `http://127.0.0.1` and `http://localhost` are allowed. The resolver is
 * handed in, so the rules run without a network and the sender checks again at each send.
 */

/** Every address a host name resolves to (A and AAAA). */
export type Resolve = (hostname: string) => Promise<string[]>;

export interface UrlRules {
  /** The local runtime: loopback receivers over http are allowed. */
  local: boolean;
  resolve: Resolve;
}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 itself
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, the instance metadata service (169.254.169.254) among it
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local, fd00:ec2::254 (the metadata service over IPv6) among it
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');

/** An IPv4 address an IPv6 one carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::`, compatible `::a.b.c.d`). */
const embeddedIpv4 = (address: string): string | undefined => {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:(?:0:)?|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:(?:0:)?|64:ff9b::|::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const [high, low] = [Number.parseInt(hex[1], 16), Number.parseInt(hex[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
};

/** Whether an address is one a receiver may not have: loopback, private, link-local, metadata, unspecified. */
export const isForbiddenAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  return (v4 !== undefined && blocked.check(v4, 'ipv4')) || blocked.check(address, 'ipv6');
};

const LOCAL_HOSTS = ['127.0.0.1', 'localhost'];

/**
 * Why a URL may not be an endpoint's, or undefined when it may. The reasons name the rule, never
 * an address the name resolved to.
 */
export const endpointUrlProblem = async (raw: string, rules: UrlRules): Promise<string | undefined> => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (rules.local && LOCAL_HOSTS.includes(url.hostname) && ['http:', 'https:'].includes(url.protocol)) return undefined;
  if (url.protocol !== 'https:')
    return rules.local ? 'must be https://, or http://127.0.0.1 or http://localhost' : 'must be https://';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await rules.resolve(host);
  } catch {
    return 'must name a host that resolves';
  }
  if (addresses.length === 0) return 'must name a host that resolves';
  if (addresses.some(isForbiddenAddress))
    return 'must not point at a loopback, private, link-local or metadata address';
  return undefined;
};
