import { ValidationError } from '../core/errors.js';
import { now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { type Actor, recordAuditEntry } from '../entities/audit-entry.js';
import { EVENT_RETENTION_SECONDS } from '../entities/event.js';
import {
  type EventDelivery,
  type FailedListPlace,
  failedDeliveriesPage,
  requeueFailedDelivery,
} from '../entities/event-delivery.js';
import { sendDeliveries } from './delivery-queue.js';
import { findEndpoint } from './endpoints.js';

/**
 * `POST /v1/webhook_endpoints/{id}/recover` (CONTRACT.md §14): every delivery to the endpoint that
 * `failed`, of an event created since `since`, is `pending` again, due now, and its message is on the
 * delivery queue; it leaves the endpoint's failed list. Reads that list (GSI7) from `since`, and the
 * page's deliveries: the cost grows with the failed deliveries recovered, never with the events delivered.
 */
export const recoverEndpoint = async (owner: Owner, id: string, since: string, actor: Actor) => {
  const endpoint = await findEndpoint(owner, id);
  const oldest = Date.now() - EVENT_RETENTION_SECONDS * 1000;
  if (Date.parse(since) < oldest || Date.parse(since) > Date.now())
    throw new ValidationError('Invalid since: must be within the last 30 days', 'since');
  let recovered = 0;
  let after: FailedListPlace | undefined;
  do {
    const page = await failedDeliveriesPage(endpoint.id, since, 100, after);
    recovered += await requeuePage(page.failed);
    after = page.next;
  } while (after);
  await recordAuditEntry({
    action: 'webhook_endpoint.recovered',
    job: { id: endpoint.id, ownerId: owner.ownerId, resellerStoreId: null },
    resourceType: 'webhook_endpoint',
    actor,
    metadata: { since, deliveries: recovered },
  });
  return { endpoint, since, deliveries: recovered };
};

/** How long a recovered delivery's message waits: time for its delivery to be made pending first. */
export const RECOVER_DELAY_SECONDS = 2;

/**
 * A page of the failed list: each delivery's message first (delayed, carrying its `attempts`), then
 * the delivery made pending. A message whose delivery did not move is dropped by the worker, so a
 * recover that fails halfway and is sent again loses none: the other order could leave a delivery
 * pending with no message, out of the failed list where a second recover would find it.
 */
const requeuePage = async (failed: EventDelivery[]) => {
  const messages = failed.map(({ eventId, endpointId, attempts }) => ({ eventId, endpointId, attempts }));
  await sendDeliveries(messages, RECOVER_DELAY_SECONDS);
  // Each unless it has moved meanwhile (a send that succeeded).
  const requeued = await Promise.all(failed.map((delivery) => requeueFailedDelivery(delivery, now())));
  return requeued.filter(Boolean).length;
};
