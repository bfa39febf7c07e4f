import type { StreamImage } from '../dynamo/stream.js';
import { type EventType, eventId } from '../entities/event.js';
import {
  type ResellerStore,
  resellerStoreFrom,
  type SourceStore,
  sourceStoreFrom,
  storeKindOf,
} from '../entities/store.js';
import { type Order, orderOfRecord } from '../order-flow/order.js';
import { isAtOrderRecordKey, type OrderRecord, orderItemFrom } from '../order-flow/order-items.js';
import type { FulfillmentEntry, SyncJob } from '../order-flow/order-sync-job.js';

/**
 * What an item's change reports (CONTRACT.md §14), read from the table's change stream: the item
 * before and after one write (shared/events/README.md, "Events and webhook endpoints"). Pure: the same
 * images always give the same changes, with the same ids, so a stream write handed over again
 * writes no second event.
 */

/** What the event's `data.object` presents: the job as GET /v1/sync_jobs/{id}, the order as GET …/orders/{id}. */
export type Subject =
  | { kind: 'syncJob'; job: SyncJob }
  | { kind: 'order'; order: Order }
  | { kind: 'resellerStore'; store: ResellerStore }
  | { kind: 'sourceStore'; store: SourceStore };

export interface Change {
  /** Derived from the item and the write (its `updatedAt`): the same write, the same id. */
  id: string;
  ownerId: string;
  type: EventType;
  /** When the change happened, as the item records it. */
  createdAt: string;
  subject: Subject;
}

/**
 * The id and time of the event of `type` that happened `at` (ISO 8601): the id spells the type and
 * time (its key, shared/entities/event.ts) and follows from `parts`, so the same write gives the same id.
 */
const placed = (type: EventType, at: string, ...parts: string[]) => ({
  id: eventId(type, at, ...parts),
  createdAt: new Date(Date.parse(at)).toISOString(),
});

const recordOf = (item: StreamImage | undefined): OrderRecord | undefined => {
  if (!item || !isAtOrderRecordKey(item)) return undefined;
  const parsed = orderItemFrom(item);
  return parsed.kind === 'job' || parsed.kind === 'unroutedOrder' || parsed.kind === 'orderCancellation'
    ? parsed
    : undefined;
};

const jobOf = (record: OrderRecord | undefined) => (record?.kind === 'job' ? record.job : undefined);

/** A status the job reached in this write, and the event type it reports. */
const STATUS_EVENTS = {
  completed: 'sync_job.completed',
  dead: 'sync_job.dead',
  cancelled: 'sync_job.cancelled',
} as const satisfies Partial<Record<SyncJob['status'], EventType>>;

const jobChange = (job: SyncJob, type: EventType, ...parts: string[]): Change => ({
  ...placed(type, job.updatedAt, job.id, job.updatedAt, ...parts),
  ownerId: job.ownerId,
  type,
  subject: { kind: 'syncJob', job },
});

const statusChanges = (before: SyncJob | undefined, after: SyncJob): Change[] => {
  const changes: Change[] = [];
  if (after.status !== before?.status && after.status in STATUS_EVENTS) {
    changes.push(jobChange(after, STATUS_EVENTS[after.status as keyof typeof STATUS_EVENTS]));
  }
  // Each failed attempt: the job enters `failed`, or stays there with one attempt more.
  if (after.status === 'failed' && (before?.status !== 'failed' || before.attempts !== after.attempts)) {
    changes.push(jobChange(after, 'sync_job.failed', String(after.attempts)));
  }
  // Held when written so (a new job) or put on hold; released when the hold is lifted without a cancellation.
  if (after.hold && after.hold.since !== before?.hold?.since) {
    changes.push(jobChange(after, 'sync_job.held', after.hold.since));
  }
  if (before?.hold && !after.hold && after.status !== 'cancelled') {
    changes.push(jobChange(after, 'sync_job.released', before.hold.since));
  }
  // Found late by the sweep (order-entries.ts): once, its time the sweep's, not a move's.
  if (after.lateAt && !before?.lateAt) {
    changes.push({
      ...placed('sync_job.late', after.lateAt, after.id),
      ownerId: after.ownerId,
      type: 'sync_job.late',
      subject: { kind: 'syncJob', job: after },
    });
  }
  if (after.attention && after.attention.since !== before?.attention?.since) {
    changes.push(jobChange(after, 'sync_job.attention_required', after.attention.since));
  }
  return changes;
};

const FULFILLMENT_EVENTS = {
  delivered: 'fulfillment.delivered',
  dead: 'fulfillment.dead',
} as const satisfies Partial<Record<FulfillmentEntry['status'], EventType>>;

/** A parcel reached the reseller's order, or was given up: the job, with its fulfillments, is the object. */
const fulfillmentChanges = (before: SyncJob | undefined, after: SyncJob): Change[] =>
  Object.values(after.fulfillments).flatMap((entry) => {
    const was = before?.fulfillments[entry.sourceFulfillmentId];
    if (entry.status === was?.status || !(entry.status in FULFILLMENT_EVENTS)) return [];
    const type = FULFILLMENT_EVENTS[entry.status as keyof typeof FULFILLMENT_EVENTS];
    return [
      {
        ...placed(type, entry.updatedAt, after.id, entry.sourceFulfillmentId, entry.updatedAt),
        ownerId: after.ownerId,
        type,
        subject: { kind: 'syncJob', job: after },
      },
    ];
  });

/**
 * A parcel the late sweep found reported but not scanned within its window (CONTRACT.md §16.2): once,
 * its time the sweep's mark on the entry.
 */
const unscannedChanges = (before: SyncJob | undefined, after: SyncJob): Change[] =>
  Object.values(after.fulfillments).flatMap((entry) =>
    entry.unscannedAt && !before?.fulfillments[entry.sourceFulfillmentId]?.unscannedAt
      ? [
          {
            ...placed('fulfillment.unscanned', entry.unscannedAt, after.id, entry.sourceFulfillmentId),
            ownerId: after.ownerId,
            type: 'fulfillment.unscanned' as const,
            subject: { kind: 'syncJob' as const, job: after },
          },
        ]
      : [],
  );

const RETURN_EVENTS = {
  open: 'sync_job.return_opened',
  closed: 'sync_job.return_closed',
  failed: 'sync_job.return_failed',
} as const satisfies Partial<Record<string, EventType>>;

/** What happened after the sale (CONTRACT.md §15.3): units removed, returns opened, closed or failed, refunds. */
const afterSaleChanges = (before: SyncJob | undefined, after: SyncJob): Change[] => {
  const next = after.afterSale;
  if (!next || next.v === before?.afterSale?.v) return [];
  const at = next.at ?? after.updatedAt;
  const change = (type: EventType, ...parts: string[]): Change => ({
    ...placed(type, at, after.id, ...parts),
    ownerId: after.ownerId,
    type,
    subject: { kind: 'syncJob', job: after },
  });
  const removed = (job: SyncJob | undefined) =>
    Object.values(job?.afterSale?.lines ?? {}).reduce((sum, line) => sum + line.removed, 0);
  const changes: Change[] = [];
  if (removed(after) > removed(before)) changes.push(change('sync_job.units_removed', String(removed(after))));
  for (const r of next.returns) {
    const was = before?.afterSale?.returns.find((entry) => entry.id === r.id)?.status;
    if (r.status !== was && r.status in RETURN_EVENTS)
      changes.push(change(RETURN_EVENTS[r.status as keyof typeof RETURN_EVENTS], r.id));
  }
  const known = new Set(before?.afterSale?.sourceRefunds.map((refund) => refund.id));
  for (const refund of next.sourceRefunds.filter((entry) => !known.has(entry.id)))
    changes.push(change('sync_job.refunded_by_source', refund.id));
  return changes;
};

/** An order recorded with items no supplier takes: once, when its record is first written. */
const unroutedChanges = (before: OrderRecord | undefined, after: OrderRecord): Change[] => {
  if (before) return [];
  const order = orderOfRecord(after);
  if (!order?.unroutedLines.length) return [];
  return [
    {
      ...placed('order.unrouted', order.createdAt, order.firstJobId),
      ownerId: order.ownerId,
      type: 'order.unrouted',
      subject: { kind: 'order', order },
    },
  ];
};

/**
 * The changes one write made: `before` and `after` are the item's images (either may be missing:
 * an insert, a removal). An order's record reports its job's status, hold, attention and fulfillment
 * entries, and the order's unrouted items; a store its connection and its webhook subscriptions.
 */
/** A store's item (reseller or source), as its kind's subject: the one its GET presents. */
const storeOf = (item: StreamImage | undefined): Extract<Subject, { store: unknown }> | undefined => {
  const kind = item ? storeKindOf(item) : undefined;
  if (!item || !kind) return undefined;
  return kind === 'reseller'
    ? { kind: 'resellerStore', store: resellerStoreFrom(item) }
    : { kind: 'sourceStore', store: sourceStoreFrom(item) };
};

/**
 * A store that left `connected` (CONTRACT.md §12: uninstalled, or its token refused), once per
 * disconnection; a store whose webhook subscriptions a check found failing.
 */
const storeChanges = (before: StreamImage | undefined, after: StreamImage | undefined): Change[] => {
  const next = storeOf(after);
  if (!next) return [];
  const previous = storeOf(before)?.store;
  const change = (type: EventType, at: string): Change => ({
    ...placed(type, at, next.store.id, at),
    ownerId: next.store.ownerId,
    type,
    subject: next,
  });
  const changes: Change[] = [];
  const connection = next.store.connection;
  const was = previous?.connection;
  if (connection.state !== 'connected' && !(was && was.state !== 'connected' && was.since === connection.since))
    changes.push(change('store.disconnected', connection.since ?? next.store.updatedAt));
  // Its webhook subscriptions found failing (CONTRACT.md §12.1): once, until a check finds them well again.
  const webhooks = next.store.webhooks;
  if (webhooks?.status === 'failing' && previous?.webhooks?.status !== 'failing')
    changes.push(change('store.webhooks_failing', webhooks.checkedAt));
  return changes;
};

export const changesOf = (before: StreamImage | undefined, after: StreamImage | undefined): Change[] => {
  const stores = storeChanges(before, after);
  if (stores.length) return stores;
  const next = recordOf(after);
  if (!next) return [];
  const previous = recordOf(before);
  const job = jobOf(next);
  const changes = unroutedChanges(previous, next);
  if (job) {
    const was = jobOf(previous);
    changes.push(
      ...statusChanges(was, job),
      ...fulfillmentChanges(was, job),
      ...unscannedChanges(was, job),
      ...afterSaleChanges(was, job),
    );
  }
  return changes;
};
