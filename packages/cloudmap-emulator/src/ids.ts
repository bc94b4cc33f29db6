import { randomBytes } from 'node:crypto';

/** IDs in the shapes real Cloud Map uses (clients must treat them as opaque anyway). */
const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomChars(n: number, chars = alphabet): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += chars[bytes[i]! % chars.length];
  return out;
}

export const newNamespaceId = (): string => `ns-${randomChars(16)}`;
export const newServiceId = (): string => `srv-${randomChars(16)}`;
export const newOperationId = (): string => `${randomChars(32)}-${randomChars(8)}`;
export const newRequestId = (): string => crypto.randomUUID();
export const newHostedZoneId = (): string =>
  `Z${randomChars(20, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`;
export const shortHash = (): string => randomChars(8);

export interface ArnContext {
  region: string;
  accountId: string;
}

export const namespaceArn = (ctx: ArnContext, id: string): string =>
  `arn:aws:servicediscovery:${ctx.region}:${ctx.accountId}:namespace/${id}`;
export const serviceArn = (ctx: ArnContext, id: string): string =>
  `arn:aws:servicediscovery:${ctx.region}:${ctx.accountId}:service/${id}`;

/** Every Id/ServiceId input accepts an ID or an ARN since the cross-account release. */
export function idFromIdOrArn(value: string): string {
  if (!value.startsWith('arn:')) return value;
  const slash = value.lastIndexOf('/');
  return slash >= 0 ? value.slice(slash + 1) : value;
}
