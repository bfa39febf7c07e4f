import { attributes } from '../dynamo/attributes.js';
import { eventKeys } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';
import type { EventType } from './event.js';

/**
 * The webhook endpoint entity (CONTRACT.md §14): where an owner's events are delivered. An owner's
 * endpoints share one partition keyed by the owner, with the count that holds them to 16: a read
 * by id names the caller's owner in the key, so another owner's endpoint is simply not there. The
 * only place that knows an endpoint's attributes.
 */

export const MAX_ENDPOINTS = 16;
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];
/** How long a rotated-out secret still signs beside the new one. */
export const SECRET_OVERLAP_SECONDS = 86_400;

/** `*`, every type, or a list of types. */
export type EnabledEvents = ['*'] | EventType[];

export interface WebhookEndpoint {
  id: string;
  ownerId: string;
  url: string;
  enabledEvents: EnabledEvents;
  description: string | null;
  status: EndpointStatus;
  disabledReason: string | null;
  /** The signing secret (`whsec_…`), encrypted (KMS, context `{storeId: <endpoint id>, field: endpointSecret}`). */
  secret: string;
  /** The secret a rotation replaced, encrypted, signing beside the new one until `previousSecretExpiresAt`. */
  previousSecret: { secret: string; expiresAt: string } | null;
  createdAt: string;
  updatedAt: string;
  /**
   * When its deliveries began to fail with none delivered since (the delivery worker's): after 5
   * days of it the endpoint is disabled. Absent or null while deliveries succeed.
   */
  failingSince?: string | null;
}

export const webhookEndpointKey = (ownerId: string, id: string) => eventKeys.endpoint(ownerId, id);
export const endpointCountKey = (ownerId: string) => eventKeys.endpointCount(ownerId);
export const endpointsPartition = (ownerId: string) => eventKeys.endpointsOf(ownerId);

/** Whether an endpoint takes events of this type now. */
export const takesEvent = (endpoint: WebhookEndpoint, type: EventType) =>
  endpoint.status === 'enabled' &&
  (endpoint.enabledEvents[0] === '*' || (endpoint.enabledEvents as EventType[]).includes(type));

/** The attributes a change of its fields writes (the PATCH's, a rotation's). */
export const endpointAttributes = (endpoint: Partial<WebhookEndpoint>): Item =>
  Object.fromEntries(Object.entries(endpoint).filter(([, value]) => value !== undefined));

export const webhookEndpointItem = (endpoint: WebhookEndpoint): Item => ({
  ...webhookEndpointKey(endpoint.ownerId, endpoint.id),
  ...endpointAttributes(endpoint),
});

export const webhookEndpointFrom = (item: Item): WebhookEndpoint => {
  const read = attributes(item, 'webhook endpoint');
  return {
    id: read.string('id'),
    ownerId: read.string('ownerId'),
    url: read.string('url'),
    enabledEvents: read.object<EnabledEvents>('enabledEvents'),
    description: read.stringOrNull('description'),
    status: read.oneOf('status', ENDPOINT_STATUSES),
    disabledReason: read.stringOrNull('disabledReason'),
    secret: read.string('secret'),
    previousSecret: read.optionalObject<{ secret: string; expiresAt: string }>('previousSecret') ?? null,
    createdAt: read.string('createdAt'),
    updatedAt: read.string('updatedAt'),
    failingSince: read.stringOrNull('failingSince'),
  };
};
