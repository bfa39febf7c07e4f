import { eventKeys } from '../dynamo/keys.js';
import {
  getItem,
  type Item,
  queryPartition,
  recordShape,
  TABLE,
  transactIf,
  updateIf,
  updateSet,
} from '../dynamo/table.js';
import type { EventType } from './event.js';

/**
 * The webhook endpoint entity (CONTRACT.md §14): where an owner's events are delivered. An owner's
 * endpoints share one partition keyed by the owner, with the count that holds them to 16: a read
 * by id names the caller's owner in the key, so another owner's endpoint is simply not there. The
 * only place that knows an endpoint's attributes and writes them.
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
  /**
   * Since when its receiver is known to answer promptly (the delivery worker's): its tries then take no
   * lease. Absent or null (a new endpoint, a new URL, a receiver seen slow): each try takes a lease.
   */
  promptSince?: string | null;
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

export const webhookEndpointFrom = recordShape<WebhookEndpoint>()('webhook endpoint', {
  strings: ['id', 'ownerId', 'url', 'secret', 'createdAt', 'updatedAt'],
  nullableStrings: ['description', 'disabledReason', 'failingSince', 'promptSince'],
  objects: ['enabledEvents'],
  optionalObjects: ['previousSecret'],
  oneOf: { status: ENDPOINT_STATUSES },
}).from;

/** Every endpoint of the owner (at most 16: one Query, consistent), in key order. */
export const webhookEndpointsOf = async (ownerId: string) => {
  const { PK, SKPrefix } = endpointsPartition(ownerId);
  return (await queryPartition(PK, SKPrefix, true)).map(webhookEndpointFrom);
};

/**
 * Every endpoint of the owner (at most 16: one Query, consistent), newest first: what an event's
 * deliveries are scheduled for (shared/events/schedule-deliveries.ts) and the list the API pages.
 */
export const endpointsOf = async (ownerId: string): Promise<WebhookEndpoint[]> => {
  const order = (e: WebhookEndpoint) => `${e.createdAt}#${e.id}`;
  return (await webhookEndpointsOf(ownerId)).sort((a, b) => (order(a) < order(b) ? 1 : -1));
};

// ---------- transaction items (each write of an endpoint goes with its audit entry)

/** The owner's count raised, as a transaction item: on condition that it stays within MAX_ENDPOINTS. */
export const endpointCountRaise = (ownerId: string) => ({
  Update: {
    TableName: TABLE(),
    Key: endpointCountKey(ownerId),
    UpdateExpression: 'ADD #n :one',
    ConditionExpression: 'attribute_not_exists(#n) OR #n < :max',
    ExpressionAttributeNames: { '#n': 'endpoints' },
    ExpressionAttributeValues: { ':one': 1, ':max': MAX_ENDPOINTS },
  },
});

/** The owner's count lowered, as a transaction item (an endpoint deleted). */
export const endpointCountLower = (ownerId: string) => ({
  Update: {
    TableName: TABLE(),
    Key: endpointCountKey(ownerId),
    UpdateExpression: 'ADD #n :minus',
    ExpressionAttributeNames: { '#n': 'endpoints' },
    ExpressionAttributeValues: { ':minus': -1 },
  },
});

/** A new endpoint's Put, as a transaction item: on condition that its id is new. */
export const webhookEndpointPut = (endpoint: WebhookEndpoint) => ({
  Put: { TableName: TABLE(), Item: webhookEndpointItem(endpoint), ConditionExpression: 'attribute_not_exists(PK)' },
});

/**
 * An endpoint's changed fields written, as a transaction item: on condition that it exists and,
 * given `secretWas`, that its secret is still the one read (of two rotations at once, one fails).
 */
export const webhookEndpointChange = (
  endpoint: Pick<WebhookEndpoint, 'ownerId' | 'id'>,
  changes: Partial<WebhookEndpoint>,
  secretWas?: string,
) => {
  const update = updateSet(endpointAttributes(changes));
  const secret = secretWas === undefined ? undefined : { names: { '#was': 'secret' }, values: { ':was': secretWas } };
  return {
    Update: {
      TableName: TABLE(),
      Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
      ...update,
      ConditionExpression: secret ? 'attribute_exists(PK) AND #was = :was' : 'attribute_exists(PK)',
      ExpressionAttributeNames: { ...update.ExpressionAttributeNames, ...secret?.names },
      ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ...secret?.values },
    },
  };
};

/** An endpoint's Delete, as a transaction item: on condition that it exists. */
export const webhookEndpointDelete = (ownerId: string, id: string) => ({
  Delete: { TableName: TABLE(), Key: webhookEndpointKey(ownerId, id), ConditionExpression: 'attribute_exists(PK)' },
});

// ---------- its health (the delivery worker's): a failed condition means another worker did it first

/** A delivered try: the endpoint is no longer failing. */
export const clearEndpointFailing = async (endpoint: Pick<WebhookEndpoint, 'ownerId' | 'id'>) => {
  await updateIf({
    Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
    UpdateExpression: 'REMOVE failingSince',
    ConditionExpression: 'attribute_exists(PK)',
  });
};

/** A failed try of an endpoint not failing yet: it is failing from `at` (unless another try marked it first). */
export const markEndpointFailing = async (endpoint: Pick<WebhookEndpoint, 'ownerId' | 'id'>, at: string) => {
  await updateIf({
    Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
    UpdateExpression: 'SET failingSince = :now',
    ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(failingSince) OR failingSince = :null)',
    ExpressionAttributeValues: { ':now': at, ':null': null },
  });
};

/**
 * Disables an endpoint failing since `failingSince` as read, with its reason: not if a delivery
 * succeeded meanwhile, or the endpoint was changed.
 */
export const disableFailingEndpoint = async (endpoint: WebhookEndpoint, reason: string, at: string) => {
  await updateIf({
    Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
    UpdateExpression: 'SET #status = :disabled, disabledReason = :reason, updatedAt = :now',
    ConditionExpression: 'failingSince = :since AND updatedAt = :updated AND #status = :enabled',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':disabled': 'disabled',
      ':enabled': 'enabled',
      ':reason': reason,
      ':now': at,
      ':since': endpoint.failingSince,
      ':updated': endpoint.updatedAt,
    },
  });
};

/** The owner's endpoint by id, read consistently; undefined when the owner has none of that id. */
export const findWebhookEndpoint = (ownerId: string, id: string) =>
  getItem(webhookEndpointKey(ownerId, id), webhookEndpointFrom, true);

/**
 * An endpoint's writes as one transaction (its own write first, with its count and audit entry):
 * true, or which writes' conditions failed.
 */
export const saveEndpointWrites = (writes: Parameters<typeof transactIf>[0]) => transactIf(writes);

/**
 * A leased try answered promptly: the endpoint's tries take no lease from now (shared/events/README.md,
 * "Integrators isolated"). Only if it is not deleted.
 */
export const markEndpointPrompt = async (endpoint: Pick<WebhookEndpoint, 'ownerId' | 'id'>, at: string) => {
  await updateIf({
    Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
    UpdateExpression: 'SET promptSince = :now',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':now': at },
  });
};

/**
 * A try not answered promptly: the endpoint's tries take a lease again. Only if it is still prompt since
 * `promptSince` as read: of the tries that find it slow at once, one writes (a newer mark is not undone).
 */
export const markEndpointSlow = async (endpoint: Pick<WebhookEndpoint, 'ownerId' | 'id'>, promptSince: string) => {
  await updateIf({
    Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
    UpdateExpression: 'REMOVE promptSince',
    ConditionExpression: 'promptSince = :was',
    ExpressionAttributeValues: { ':was': promptSince },
  });
};
