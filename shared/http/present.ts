/** Record → API object: the only place that decides what a response shows. Secrets never pass. */

import { fulfillmentStatusOf } from '../domain/shipping.js';
import type { AuditEntry } from '../entities/audit-entry.js';
import { DATA_REQUEST_RETENTION_SECONDS, type DataRequest } from '../entities/data-request.js';
import type { Event } from '../entities/event.js';
import type { EventDelivery } from '../entities/event-delivery.js';
import type { ResellerStore, SourceStore } from '../entities/store.js';
import type { WebhookEndpoint } from '../entities/webhook-endpoint.js';
import type { Order } from '../order-flow/order.js';
import { afterSaleView, lineAfterSaleView } from '../order-flow/order-after-sale.js';
import { serviceLevelOfJob } from '../order-flow/order-entries.js';
import type { JobLine } from '../order-flow/order-repository.js';
import {
  type Attempt,
  attemptId,
  type FulfillmentEntry,
  fulfilledQuantities,
  type SyncJob,
} from '../order-flow/order-sync-job.js';

/** How a store stays connected (CONTRACT.md §12): its connection, subscriptions, API version, token expiry. */
const presentConnection = (store: ResellerStore | SourceStore) => ({
  connection: store.connection,
  webhooks: store.webhooks,
  apiVersion: store.apiVersion ?? null,
  tokenExpiresAt: store.tokenLife?.tokenExpiresAt ?? null,
});

export const presentResellerStore = (store: ResellerStore) => ({
  id: store.id,
  object: 'reseller_store',
  ownerId: store.ownerId,
  name: store.name,
  platform: store.platform,
  shopDomain: store.shopDomain,
  routingPolicy: store.routingPolicy,
  ...presentConnection(store),
  createdAt: store.createdAt,
  deletedAt: store.deletedAt,
});

export const presentSourceStore = (store: SourceStore) => ({
  id: store.id,
  object: 'source_store',
  resellerStoreId: store.resellerStoreId,
  name: store.name,
  platform: store.platform,
  shopDomain: store.shopDomain,
  vendorTag: store.vendorTag,
  ...presentConnection(store),
  pricingMode: store.pricingMode,
  pricingConfig: store.pricingConfig,
  serviceLevel: store.serviceLevel ?? null,
  createdAt: store.createdAt,
  deletedAt: store.deletedAt,
});

/**
 * A sync job with the reseller lines it carries (`lines`: derived from its stored order, see
 * `jobLines`), each with what the reseller's platform accepted as shipped, and the job's
 * `fulfillmentStatus` from those (CONTRACT.md §10.1–10.2).
 */
export const presentSyncJob = (job: SyncJob, lines: JobLine[] = []) => {
  const fulfilled = fulfilledQuantities(lines, job.fulfillments);
  const lineItems = lines.map((line, i) => ({
    resellerLineItemId: line.resellerLineItemId,
    sourceLineItemId: line.sourceLineItemId,
    sku: line.sku,
    title: line.title,
    variantTitle: line.variantTitle,
    quantity: line.quantity,
    price: line.price,
    sourcePrice: line.sourcePrice,
    fulfilledQuantity: fulfilled[i],
    ...lineAfterSaleView(job.afterSale ?? null, line.resellerLineItemId),
  }));
  return {
    ...presentJob(job),
    lineItems,
    fulfillmentStatus: fulfillmentStatusOf(lineItems),
    ...afterSaleView(job.afterSale ?? null, lines),
    serviceLevel: serviceLevelOfJob(job, lines),
  };
};

const presentJob = (job: SyncJob) => ({
  id: job.id,
  object: 'sync_job',
  resellerStoreId: job.resellerStoreId,
  sourceStoreId: job.sourceStoreId,
  status: job.status,
  attempts: job.attempts,
  externalOrderId: job.externalOrderId,
  sourceOrderId: job.sourceOrderId,
  errorMessage: job.errorMessage,
  completedAt: job.completedAt,
  failedAt: job.failedAt,
  deadAt: job.deadAt,
  cancelledAt: job.cancelledAt,
  cancellation: job.cancellation,
  attention: job.attention,
  hold: job.hold,
  createdAt: job.createdAt,
  updatedAt: job.updatedAt,
  redactedAt: job.redactedAt ?? null,
  tagged: job.tagged ?? null,
  ...presentFulfillments(job.fulfillments),
});

const presentFulfillment = (entry: FulfillmentEntry) => ({
  sourceFulfillmentId: entry.sourceFulfillmentId,
  status: entry.status,
  trackingCompany: entry.trackingCompany,
  trackingNumber: entry.trackingNumber,
  trackingNumbers: entry.trackingNumbers,
  trackingUrl: entry.trackingUrl,
  resellerFulfillmentId: entry.resellerFulfillmentId,
  // The reseller's line items the parcel ships; null: the whole job (a job without line item ids).
  lineItems: entry.lines?.map((line) => ({ resellerLineItemId: line.id, quantity: line.quantity })) ?? null,
  attempts: entry.attempts,
  errorMessage: entry.errorMessage,
  receivedAt: entry.receivedAt,
  // The carrier's progress (CONTRACT.md §16.2): null when the supplier's platform never said.
  shipmentStatus: entry.shipmentStatus ?? null,
  firstScanAt: entry.firstScanAt ?? null,
  deliveredAt: entry.deliveredAt,
  updatedAt: entry.updatedAt,
});

/**
 * Propagation on the sync job (docs/propagation.md): `fulfillment` is the most recently
 * received source fulfillment (null until one arrives), `fulfillments` every one, oldest first,
 * for a supplier that ships an order in several parcels.
 */
const presentFulfillments = (entries: Record<string, FulfillmentEntry>) => {
  const fulfillments = Object.values(entries)
    .sort(
      (a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.sourceFulfillmentId.localeCompare(b.sourceFulfillmentId),
    )
    .map(presentFulfillment);
  return { fulfillment: fulfillments.at(-1) ?? null, fulfillments };
};

/**
 * An order as the service saw it (CONTRACT.md §10.8): its jobs, and its items that went to no
 * supplier with why (`unroutedLineItems`: shared/order-flow/reading.ts). It has no `id` of its own: the
 * reseller's `externalOrderId` names it, and is a list's cursor.
 */
export const presentOrder = (
  order: Order,
  unroutedLineItems: { resellerLineItemId: string | null; reason: string }[] = [],
) => ({
  object: 'order',
  resellerStoreId: order.resellerStoreId,
  externalOrderId: order.externalOrderId,
  receivedAt: order.createdAt,
  receivedVia: order.receivedVia,
  syncJobIds: order.syncJobIds,
  unroutedLineItems,
  cancelledAt: order.cancelledAt,
  redactedAt: order.redactedAt,
  refunds: order.refunds,
});

/** A shopper's data request as kept (CONTRACT.md §13): field names, never values. */
export const presentDataRequest = (request: DataRequest) => ({
  id: request.id,
  object: 'data_request',
  resellerStoreId: request.resellerStoreId,
  customerId: request.customerId,
  orders: request.orders,
  receivedAt: request.receivedAt,
  expiresAt: new Date(Date.parse(request.receivedAt) + DATA_REQUEST_RETENTION_SECONDS * 1000).toISOString(),
});

/** One entry of a job's attempt history (CONTRACT.md §6); `count` > 1 for throttled attempts in a row. */
export const presentAttempt = (syncJobId: string, attempt: Attempt) => ({
  id: attemptId(syncJobId, attempt.number),
  object: 'sync_job_attempt',
  syncJobId,
  number: attempt.number,
  trigger: attempt.trigger,
  outcome: attempt.outcome,
  platformStatus: attempt.platformStatus,
  errorMessage: attempt.errorMessage,
  startedAt: attempt.startedAt,
  endedAt: attempt.endedAt,
  durationMs: attempt.durationMs,
  count: attempt.count,
});

export const presentAuditEntry = (entry: AuditEntry) => ({
  id: entry.id,
  object: 'audit_log_entry',
  action: entry.action,
  resellerStoreId: entry.resellerStoreId,
  resourceType: entry.resourceType,
  resourceId: entry.resourceId,
  actorId: entry.actorId,
  actor: entry.actor,
  metadata: entry.metadata,
  createdAt: entry.createdAt,
});

export const presentList = (url: string, data: unknown[], hasMore: boolean) => ({
  object: 'list',
  data,
  has_more: hasMore,
  url,
});

export const presentEvent = (event: Event) => ({
  id: event.id,
  object: 'event',
  type: event.type,
  created: event.createdAt,
  data: { object: event.object },
});

export const presentEventDelivery = (delivery: EventDelivery) => ({
  endpointId: delivery.endpointId,
  status: delivery.status,
  attempts: delivery.attempts,
  lastResponseStatus: delivery.lastResponseStatus,
  nextAttemptAt: delivery.nextAttemptAt,
});

/** `GET /v1/events/{id}`: the event and where each of its deliveries stands. */
export const presentEventWithDeliveries = (event: Event, deliveries: EventDelivery[]) => ({
  ...presentEvent(event),
  deliveries: deliveries.map(presentEventDelivery),
});

/** An endpoint; its `secret` only in the answers of create and rotate_secret, never its ciphertext. */
export const presentWebhookEndpoint = (endpoint: WebhookEndpoint, secret?: string) => ({
  id: endpoint.id,
  object: 'webhook_endpoint',
  url: endpoint.url,
  enabledEvents: endpoint.enabledEvents,
  description: endpoint.description,
  status: endpoint.status,
  disabledReason: endpoint.disabledReason,
  createdAt: endpoint.createdAt,
  updatedAt: endpoint.updatedAt,
  ...(secret === undefined ? {} : { secret }),
});

export const presentRecovery = (recovery: { endpoint: WebhookEndpoint; since: string; deliveries: number }) => ({
  object: 'webhook_endpoint_recovery',
  endpointId: recovery.endpoint.id,
  since: recovery.since,
  deliveries: recovery.deliveries,
});
