import { SYNC_JOB_STATUSES } from '../../shared/domain/orders.js';
import {
  HOLD_REASONS,
  MAX_HOLD_DELAY_SECONDS,
  PAYMENT_POLICIES,
  RISK_POLICIES,
  TEST_ORDER_POLICIES,
  UNROUTED_REASONS,
} from '../../shared/domain/routing.js';
import { SHIPMENT_STATUSES } from '../../shared/domain/shipping.js';
import { AUDIT_ACTIONS, AUDITED_RESOURCES } from '../../shared/entities/audit-entry.js';
import { EVENT_TYPES } from '../../shared/entities/event.js';
import { DELIVERY_STATUSES } from '../../shared/entities/event-delivery.js';
import { ENDPOINT_STATUSES } from '../../shared/entities/webhook-endpoint.js';

/**
 * The response shapes of the OpenAPI document, in JSON Schema 2020-12. They mirror
 * shared/http/present.ts, the one place that decides what a response shows; the integration tests
 * check every response they receive against them (test/openapi-conformance.ts).
 */

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

/**
 * `["*"]` (shared/http/schemas.ts `EveryEventType`) in requests and answers: an array of one `"*"`, with
 * an `items` schema as linters (Spectral's array-items) and code generators want, not a tuple's
 * `prefixItems` with `items: false`.
 */
export const EVERY_EVENT_TYPE = { type: 'array', items: { const: '*' }, minItems: 1, maxItems: 1 };

const str = { type: 'string' };
const count = { type: 'integer', minimum: 0 };
const timestamp = {
  type: 'string',
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds',
  examples: ['2026-11-21T04:02:45.123Z'],
};
const id = (prefix: string) => ({ type: 'string', pattern: `^${prefix}_`, examples: [`${prefix}_0123456789abcdef`] });
const requestId = {
  type: 'string',
  pattern: '^req_[0-9a-z]+$',
  description: 'the request id, also in the `Request-Id` header',
};

/** An API object: `id`, `object`, its fields and `request_id`, all of them always present. */
const object = (name: string, prefix: string, properties: Record<string, unknown>, description: string) => ({
  type: 'object',
  description,
  required: ['id', 'object', ...Object.keys(properties), 'request_id'],
  properties: { id: id(prefix), object: { const: name }, ...properties, request_id: requestId },
});

/** An object of these fields, each always present (null where its schema allows); `type` its type. */
const alwaysPresent = (
  properties: Record<string, unknown>,
  description: string,
  type: string | string[] = 'object',
) => ({
  type,
  required: Object.keys(properties),
  properties,
  description,
});

const shopDomain = { $ref: '#/components/schemas/shop_domain', description: 'stored lower-cased' };

const fulfillment = alwaysPresent(
  {
    sourceFulfillmentId: str,
    status: { enum: ['pending', 'delivered', 'failed', 'dead', 'ignored', 'cancelled'] },
    trackingCompany: nullable(str),
    trackingNumber: nullable(str),
    trackingNumbers: { type: 'array', items: str },
    trackingUrl: nullable(str),
    resellerFulfillmentId: nullable(str),
    lineItems: {
      anyOf: [
        {
          type: 'array',
          items: {
            type: 'object',
            required: ['resellerLineItemId', 'quantity'],
            properties: { resellerLineItemId: str, quantity: count },
          },
        },
        { type: 'null' },
      ],
      description:
        "the reseller's line items and quantities the parcel ships; null: the whole job (its lines have no ids)",
    },
    attempts: count,
    errorMessage: nullable(str),
    receivedAt: timestamp,
    shipmentStatus: {
      anyOf: [{ enum: [...SHIPMENT_STATUSES] }, { type: 'null' }],
      description:
        "the carrier's progress as the supplier's platform last said it; null: never said (the carrier is not " +
        'tracked). It never moves back (CONTRACT.md §16.2)',
    },
    firstScanAt: {
      ...nullable(timestamp),
      description: "the carrier's time of its first scan (in transit or later); `failure` is no scan",
    },
    deliveredAt: nullable(timestamp),
    updatedAt: timestamp,
  },
  'A source fulfillment (a parcel) and where it stands on the reseller store (docs/propagation.md): ' +
    '`pending` while a create, a tracking update or a cancellation is on its way, `failed` between attempts, ' +
    '`delivered` when the reseller store has it as the supplier last said, `dead` when it cannot be, ' +
    '`ignored` when nothing of the job was left to ship (`errorMessage` says why), `cancelled` when the ' +
    'supplier voided it and the reseller store no longer has it (CONTRACT.md §10.2–10.3).',
);

/** `pricingMode` and the `pricingConfig` of that mode (SPEC 2.3), one branch per mode. */
const pricingOf = (mode: string, config: string) => ({
  type: 'object',
  required: ['pricingMode', 'pricingConfig'],
  properties: { pricingMode: { const: mode }, pricingConfig: ref(config) },
});

/**
 * The list envelope (SPEC 2.5) of one resource; `request_id` is in each item too (CONTRACT.md §3).
 * Named `<resource>_list` in components.
 */
export const listOf = (resource: string) => ({
  type: 'object',
  required: ['object', 'data', 'has_more', 'url', 'request_id'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: ref(resource), description: 'newest first' },
    has_more: { type: 'boolean', description: 'pass the last id as `starting_after` for the next page' },
    url: { type: 'string', description: 'the path of the list' },
    request_id: requestId,
  },
});

/** An endpoint as create and rotate_secret answer it: with its signing secret, shown there only. */
const withSecret = (schema: ReturnType<typeof object>) => ({
  ...schema,
  properties: {
    ...schema.properties,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
      description: '`whsec_` and the base64 of 32 random bytes; only in the answers of create and rotate_secret',
    },
  },
});

/** Whether the service may call a store with its token (CONTRACT.md §12.2). */
const storeConnection = alwaysPresent(
  {
    state: { enum: ['connected', 'uninstalled', 'reauthorization_required'] },
    since: { ...nullable(timestamp), description: 'when it left `connected`' },
    reason: { type: ['string', 'null'], description: 'what disconnected it: `app/uninstalled`, `invalid_grant`…' },
  },
  '`uninstalled` after the shop’s `app/uninstalled`, `reauthorization_required` after a refused token ' +
    'refresh: its jobs and fulfillments end `dead` with `store_disconnected`, without a call, until new ' +
    'credentials (`POST …/credentials`) reconnect it.',
);

/** What the last check of the store's webhook subscriptions found (CONTRACT.md §12.1). */
const storeWebhooks = alwaysPresent(
  {
    status: { enum: ['healthy', 'repaired', 'failing', 'pending', 'unmanaged'] },
    checkedAt: timestamp,
    missing: { type: 'array', items: { type: 'string' }, description: 'topics found missing' },
    error: { type: ['string', 'null'], description: 'the platform’s reason, when `failing`' },
  },
  'Checked on creation, on new credentials and at every poll: `repaired` when some were missing and are ' +
    'made again, `failing` with the platform’s reason, `pending` when the shop did not answer in time at ' +
    'creation or on new credentials (the next poll finishes it), `unmanaged` for a custom store; null before ' +
    'the first check.',
  ['object', 'null'],
);

/** The platform API version the store's answers named (CONTRACT.md §12.4). */
const storeApiVersion = alwaysPresent(
  {
    requested: { type: 'string', description: 'the version every call names (one constant per platform)' },
    served: { type: ['string', 'null'], description: '`X-Shopify-API-Version` of the last answer' },
    deprecations: { type: 'array', items: { type: 'string' }, description: '`X-Shopify-API-Deprecated-Reason`s' },
    checkedAt: timestamp,
  },
  'Null until the store was first called; another version served, or a deprecation, is counted.',
  ['object', 'null'],
);

/** The access token's expiry (CONTRACT.md §12.3). */
const tokenExpiresAt = {
  ...nullable(timestamp),
  description:
    'when the access token expires, as given (`accessTokenExpiresAt`) or as its last refresh said; null when it ' +
    'does not. The token is refreshed in the last tenth of its life (at most 5 minutes) and after a 401.',
};

/** What an event carries (CONTRACT.md §14), alike in the API's answer and in a delivery's body. */
const eventData = {
  type: 'object',
  required: ['object'],
  properties: { object: { type: 'object', description: 'a sync job, an order or a store, as its GET answers it' } },
} as const;

/** A rate over the decided jobs, rounded to 4 places; null with no decided job. */
const rate = (description: string) => ({ type: ['number', 'null'], minimum: 0, maximum: 1, description });
const hours = alwaysPresent(
  { p50: { type: ['number', 'null'] }, p90: { type: ['number', 'null'] } },
  'percentiles, as the upper bound of a fixed histogram bucket (hours); null with none',
);

/** A supplier's scorecard (CONTRACT.md §16.3). */
const scorecard = alwaysPresent(
  {
    object: { const: 'scorecard' },
    sourceStoreId: id('sst'),
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    jobsDue: { type: 'integer', minimum: 0 },
    shippedOnTime: { type: 'integer', minimum: 0 },
    onTimeRate: rate('shipped by the due time'),
    lateShipmentRate: rate('neither shipped by the due time nor cancelled by the supplier'),
    scanVerifiedOnTimeRate: rate('shipped on time with every parcel scanned by its carrier within 2 working days'),
    validTrackingRate: rate('of the parcels whose status was reported, those scanned within 2 working days'),
    sourceCancellationRate: rate('cancelled by the supplier'),
    hoursToTracking: hours,
    hoursToFirstScan: hours,
    lateNow: { type: 'integer', description: 'jobs past their due time, not shipped and not cancelled, now' },
    untrackedParcels: { type: 'integer', description: 'parcels whose carrier status was never reported' },
    sufficient: { type: 'boolean', description: 'at least 20 decided jobs' },
    request_id: requestId,
  },
  'A supplier’s scorecard over the jobs due in a window of days (its zone), reseller cancellations left ' +
    'out; each job counted once, by the late sweep, at its due time. Parcel scans are not counted yet: ' +
    'their figures are null.',
);

export const responseSchemas: Record<string, Record<string, unknown>> = {
  scorecard,
  reseller_store: object(
    'reseller_store',
    'rst',
    {
      ownerId: str,
      name: str,
      platform: str,
      shopDomain,
      routingPolicy: alwaysPresent(
        {
          holdSeconds: { type: 'integer', minimum: 0, maximum: MAX_HOLD_DELAY_SECONDS },
          payment: { enum: PAYMENT_POLICIES },
          risk: { enum: RISK_POLICIES },
          testOrders: { enum: TEST_ORDER_POLICIES },
        },
        'when an order may go to its suppliers (CONTRACT.md §11); every field shown, defaults included',
      ),
      connection: storeConnection,
      webhooks: storeWebhooks,
      apiVersion: storeApiVersion,
      tokenExpiresAt,
      createdAt: timestamp,
      deletedAt: { ...nullable(timestamp), description: 'set by a (soft) delete' },
    },
    'A reseller store (SPEC 2.1). Its secrets are never returned.',
  ),
  source_store: {
    allOf: [
      object(
        'source_store',
        'sst',
        {
          resellerStoreId: id('rst'),
          name: str,
          platform: { enum: ['storeplatform_a', 'storeplatform_b', 'custom'] },
          shopDomain,
          vendorTag: { type: 'string', description: 'line items whose `vendor` equals it are routed here' },
          connection: storeConnection,
          webhooks: storeWebhooks,
          apiVersion: storeApiVersion,
          tokenExpiresAt,
          serviceLevel: {
            anyOf: [
              {
                type: 'object',
                required: ['shipWithinBusinessDays', 'cutoffTime', 'timeZone', 'workingDays', 'daysOff'],
                properties: {
                  shipWithinBusinessDays: { type: 'integer', minimum: 1, maximum: 30 },
                  cutoffTime: { type: 'string', description: 'HH:MM, local' },
                  timeZone: { type: 'string', description: 'IANA; the shop’s own when none was named' },
                  workingDays: { type: 'array', items: { enum: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] } },
                  daysOff: { type: 'array', items: { type: 'string', format: 'date' } },
                },
              },
              { type: 'null' },
            ],
            description: 'the supplier’s promise (CONTRACT.md §16.1), defaults filled in; null: none',
          },
          createdAt: timestamp,
          deletedAt: { ...nullable(timestamp), description: 'set by a (soft) delete' },
        },
        'A source store under a reseller store (SPEC 2.2). Its secrets are never returned.',
      ),
      {
        oneOf: [
          pricingOf('percentage', 'percentage_pricing_config'),
          pricingOf('field_rules', 'field_rules_pricing_config'),
        ],
      },
    ],
  },
  sync_job: object(
    'sync_job',
    'sj',
    {
      resellerStoreId: id('rst'),
      sourceStoreId: id('sst'),
      status: { enum: SYNC_JOB_STATUSES },
      attempts: count,
      externalOrderId: { type: 'string', description: "the order's id on the reseller store" },
      sourceOrderId: { ...nullable(str), description: "the order's id on the source store, once placed" },
      errorMessage: nullable(str),
      completedAt: nullable(timestamp),
      failedAt: nullable(timestamp),
      deadAt: nullable(timestamp),
      cancelledAt: { ...nullable(timestamp), description: 'when the job became `cancelled`' },
      cancellation: {
        anyOf: [ref('sync_job_cancellation'), { type: 'null' }],
        description: 'a cancellation asked of the job’s order, and where it stands; null when none was',
      },
      attention: {
        anyOf: [
          {
            type: 'object',
            required: ['reason', 'since'],
            properties: { reason: str, since: timestamp },
          },
          { type: 'null' },
        ],
        description: 'what needs a person (a cancellation that kept failing, say); null when nothing does',
      },
      hold: {
        anyOf: [
          {
            type: 'object',
            required: ['reasons', 'since', 'until'],
            properties: {
              reasons: { type: 'array', items: { enum: HOLD_REASONS } },
              since: timestamp,
              until: { ...nullable(timestamp), description: 'the end of a `delay`' },
            },
          },
          { type: 'null' },
        ],
        description: 'why a `pending` job does not go to its supplier yet (CONTRACT.md §11); null when not held',
      },
      createdAt: timestamp,
      updatedAt: timestamp,
      tagged: {
        ...nullable({ type: 'boolean' }),
        description:
          'whether the reseller’s order got its `routed-<vendorTag>` tag (CONTRACT.md §12.5): true, false when it ' +
          'could not be written, null while pending or where the platform takes no tags (custom)',
      },
      redactedAt: {
        ...nullable(timestamp),
        description: 'when the shopper’s personal data was erased from it (CONTRACT.md §13); null: not erased',
      },
      fulfillment: {
        anyOf: [ref('fulfillment'), { type: 'null' }],
        description: 'the latest source fulfillment; null until one arrives',
      },
      fulfillments: { type: 'array', items: ref('fulfillment'), description: 'every source fulfillment, oldest first' },
      lineItems: {
        type: 'array',
        items: ref('sync_job_line_item'),
        description: "the reseller's line items the job carries, in order (CONTRACT.md §10.1)",
      },
      fulfillmentStatus: {
        enum: ['unfulfilled', 'partial', 'fulfilled'],
        description: "from the lines' `fulfilledQuantity`: every quantity on the reseller's order is `fulfilled`",
      },
      returns: {
        type: 'array',
        items: ref('sync_job_return'),
        description: 'the returns opened on the supplier for the reseller’s returns (CONTRACT.md §15.2), oldest first',
      },
      sourceRefunds: {
        type: 'array',
        items: ref('sync_job_source_refund'),
        description: 'the supplier’s refunds on its order (CONTRACT.md §15.2), oldest first',
      },
      credit: {
        anyOf: [
          {
            type: 'object',
            required: ['currency', 'expected', 'refunded'],
            properties: {
              currency: str,
              expected: { ...str, description: 'the wholesale value of the units in returns `open` or `closed`' },
              refunded: { ...str, description: 'the supplier’s refunds in the order’s currency' },
            },
          },
          { type: 'null' },
        ],
        description: 'what the supplier owes back (CONTRACT.md §15.3); null while the job has no return nor refund',
      },
      serviceLevel: {
        anyOf: [
          {
            type: 'object',
            required: ['dueAt', 'shippedAt', 'onTime', 'late'],
            properties: {
              dueAt: { ...timestamp, description: 'when the supplier order is due to ship (CONTRACT.md §16.1)' },
              shippedAt: { ...nullable(timestamp), description: 'when every unit was in a parcel with tracking' },
              onTime: { ...nullable({ type: 'boolean' }), description: 'null while undecided' },
              late: { type: 'boolean', description: 'past `dueAt`, not shipped, not cancelled' },
            },
          },
          { type: 'null' },
        ],
        description: 'the promise kept (CONTRACT.md §16.2); null: no promise, or no supplier order yet',
      },
    },
    'One order placed on one supplier (SPEC 2.4, CONTRACT.md §6).',
  ),
  fulfillment,
  order: alwaysPresent(
    {
      object: { const: 'order' },
      resellerStoreId: id('rst'),
      externalOrderId: { type: 'string', description: "the order's id on the reseller store" },
      receivedAt: { ...timestamp, description: 'when its first delivery (webhook or poll) was recorded' },
      receivedVia: { enum: ['webhook', 'poll'], description: 'how it first arrived; a later delivery changes nothing' },
      syncJobIds: { type: 'array', items: id('sj'), description: 'one job per supplier; none when no item routed' },
      unroutedLineItems: {
        type: 'array',
        items: ref('order_unrouted_line_item'),
        description: 'the items that went to no supplier, in the order’s order',
      },
      cancelledAt: { ...nullable(timestamp), description: 'when the reseller’s `orders/cancelled` came; null: none' },
      redactedAt: {
        ...nullable(timestamp),
        description: 'when the shopper’s personal data was erased from it (CONTRACT.md §13); null: not erased',
      },
      refunds: {
        type: 'array',
        items: ref('order_refund'),
        description: 'every refund of the order (CONTRACT.md §15.3), money-only ones too, oldest first',
      },
      request_id: requestId,
    },
    'A reseller order as the service saw it (CONTRACT.md §10.8). No `id` of its own: `externalOrderId` names it ' +
      '(and is the lists’ cursor).',
  ),
  order_refund: alwaysPresent(
    {
      id: str,
      createdAt: str,
      lines: {
        type: 'array',
        items: {
          type: 'object',
          required: ['resellerLineItemId', 'quantity', 'restockType'],
          properties: { resellerLineItemId: str, quantity: count, restockType: str },
        },
      },
      amount: { ...nullable(str), description: 'the refunded lines’ and shipping’s amounts summed; null: none said' },
      currency: nullable(str),
    },
    'A refund of the reseller’s order, as its `refunds/create` said it (CONTRACT.md §15.3).',
  ),
  sync_job_return: alwaysPresent(
    {
      id: { type: 'string', pattern: '^ret_' },
      resellerReturnId: str,
      sourceReturnId: { ...nullable(str), description: 'the platform’s id: digits, or Shopify’s `gid://`' },
      status: { enum: ['pending', 'open', 'closed', 'cancelled', 'failed'] },
      lines: {
        type: 'array',
        items: {
          type: 'object',
          required: ['resellerLineItemId', 'sourceLineItemId', 'quantity', 'reason'],
          properties: {
            resellerLineItemId: str,
            sourceLineItemId: nullable(str),
            quantity: count,
            reason: { ...str, description: 'the platform’s reason, lower-cased' },
          },
        },
      },
      error: nullable(str),
      openedAt: nullable(timestamp),
      closedAt: nullable(timestamp),
    },
    'A return on the supplier for one reseller return (CONTRACT.md §15.2): `pending` until opened, `open`, ' +
      '`closed` by the supplier, `cancelled` (by the reseller, or the supplier), `failed` when refused.',
  ),
  sync_job_source_refund: alwaysPresent(
    {
      id: str,
      amount: str,
      currency: str,
      returnId: { ...nullable(str), description: 'the job’s return it pays for, when one matches its lines' },
      lines: {
        type: 'array',
        items: {
          type: 'object',
          required: ['sourceLineItemId', 'quantity'],
          properties: { sourceLineItemId: str, quantity: count },
        },
      },
      createdAt: str,
    },
    'A refund the supplier made on its order (CONTRACT.md §15.2): what it says it owes.',
  ),
  order_unrouted_line_item: alwaysPresent(
    {
      resellerLineItemId: { ...nullable(str), description: "the payload's line item `id` as its digits stand" },
      sku: nullable(str),
      title: nullable(str),
      vendor: nullable(str),
      quantity: count,
      reason: { enum: UNROUTED_REASONS },
    },
    'An item of the order that went to no supplier: a gift card, an item without a vendor, or one whose vendor ' +
      'is no active source store’s `vendorTag` when the order came.',
  ),
  sync_job_cancellation: alwaysPresent(
    {
      requestedBy: { enum: ['reseller', 'source'] },
      status: { enum: ['requested', 'done', 'declined'] },
      reason: { ...nullable(str), description: 'the platform’s `cancel_reason`, or why the supplier declined' },
      requestedAt: timestamp,
      endedAt: nullable(timestamp),
    },
    'A cancellation of a sync job’s order (CONTRACT.md §10.4–10.5): asked by the reseller’s `orders/cancelled` or ' +
      'the supplier’s. `requested` while its supplier order is being cancelled, `done` when the job is `cancelled`, ' +
      '`declined` when the supplier refused (it has shipped): the job then stays `completed`.',
  ),
  sync_job_line_item: alwaysPresent(
    {
      resellerLineItemId: { ...nullable(str), description: "the payload's line item `id` as its digits stand" },
      sourceLineItemId: { ...nullable(str), description: "the supplier's id of the line; null until placed" },
      sku: nullable(str),
      title: nullable(str),
      variantTitle: nullable(str),
      quantity: count,
      price: { type: 'string', description: "the reseller's unit price" },
      sourcePrice: { ...nullable(str), description: 'the unit price placed at on the supplier; null until placed' },
      fulfilledQuantity: { ...count, description: "how many the reseller's platform has accepted as shipped" },
      refundedQuantity: {
        ...count,
        description: 'units the reseller refunded, every restock type (CONTRACT.md §15.3)',
      },
      removedQuantity: {
        ...count,
        description: 'units that left the supplier order, or were never placed because a refund came first',
      },
      returnedQuantity: { ...count, description: 'units in a supplier return not `cancelled` or `failed`' },
    },
    "One reseller line item a sync job carries, with the supplier's id of it once placed and the unit price " +
      'before and after the markup was removed (the per-line price breakdown).',
  ),
  sync_job_attempt: object(
    'sync_job_attempt',
    'sja',
    {
      syncJobId: id('sj'),
      number: { type: 'integer', minimum: 1 },
      trigger: { enum: ['webhook', 'redelivery', 'retry', 'reconciler', 'poll'] },
      outcome: { enum: ['completed', 'failed', 'throttled', 'dead', 'found_existing'] },
      platformStatus: { ...nullable({ type: 'integer' }), description: "the platform's HTTP status" },
      errorMessage: nullable(str),
      startedAt: { ...timestamp, description: 'when it began (the first of a folded run)' },
      endedAt: { ...timestamp, description: 'when it ended (the last of a folded run)' },
      durationMs: { ...count, description: 'the time spent in it (in all of a folded run)' },
      count: {
        type: 'integer',
        minimum: 1,
        description: 'attempts in the entry: more than 1 for throttled ones in a row',
      },
    },
    'One attempt of a sync job to place its order (CONTRACT.md §6); throttled attempts in a row are one ' +
      'entry with `count`. A job keeps its last 100 entries.',
  ),
  data_request: alwaysPresent(
    {
      id: { type: 'string', description: 'the platform’s id of the request (`data_request.id`)' },
      object: { const: 'data_request' },
      resellerStoreId: id('rst'),
      customerId: { ...nullable(str), description: 'the platform’s id of the customer' },
      orders: {
        type: 'array',
        items: {
          type: 'object',
          required: ['externalOrderId', 'held', 'syncJobIds', 'personalFields', 'redactedAt'],
          properties: {
            externalOrderId: str,
            held: { type: 'boolean', description: 'whether the service holds a record of the order' },
            syncJobIds: { type: 'array', items: id('sj') },
            personalFields: {
              type: 'array',
              items: str,
              description: 'the personal fields kept of the order (`email`, `shipping_address`, …), by name',
            },
            redactedAt: nullable(timestamp),
          },
        },
      },
      receivedAt: timestamp,
      expiresAt: { ...timestamp, description: 'when the record is no longer kept' },
      request_id: requestId,
    },
    'A shopper’s data request (`customers/data_request`, CONTRACT.md §13), kept 30 days: which of the orders ' +
      'it names the service holds, and which personal fields it keeps of each (names, never values).',
  ),
  audit_log_entry: object(
    'audit_log_entry',
    'aud',
    {
      action: { enum: AUDIT_ACTIONS },
      resellerStoreId: { ...nullable(id('rst')), description: 'null for a webhook endpoint' },
      resourceType: { enum: AUDITED_RESOURCES },
      resourceId: {
        type: 'string',
        pattern: '^(sj|rst|sst|we)_',
        description:
          'the sync job (`sj_`), for a credentials rotation the store (`rst_`, `sst_`), or the webhook ' +
          'endpoint (`we_`)',
      },
      actorId: { type: 'string', description: 'the key id (never the key), or `system`' },
      actor: {
        oneOf: [
          {
            type: 'object',
            required: ['type', 'id'],
            properties: { type: { const: 'api_key' }, id: { type: 'string', description: 'the key id' } },
          },
          {
            type: 'object',
            required: ['type', 'id'],
            properties: { type: { const: 'system' }, id: { const: 'system' } },
          },
        ],
      },
      metadata: {
        type: 'object',
        description:
          '`previousStatus` for the sync job actions, `reason` and `attempts` for `sync_job.dead`; for a ' +
          'credentials rotation, which secrets were replaced (`rotated`, names only, never a secret) and until ' +
          'when the replaced webhook secret verifies',
        properties: {
          previousStatus: { enum: SYNC_JOB_STATUSES },
          reason: str,
          attempts: count,
          rotated: { type: 'array', items: { enum: ['accessToken', 'webhookSecret'] } },
          previousWebhookSecretValidUntil: timestamp,
        },
      },
      createdAt: timestamp,
    },
    'An entry of the audit log (CONTRACT.md §6).',
  ),
  event_type: {
    enum: EVENT_TYPES,
    description:
      'What an event reports (CONTRACT.md §14): `sync_job.failed` is each failed attempt, `fulfillment.delivered` ' +
      "a parcel that reached the reseller's order, `fulfillment.unscanned` a parcel whose carrier reported it " +
      'but did not scan it within 2 working days of its creation (once; CONTRACT.md §16.2), `order.unrouted` an ' +
      'order with items no supplier takes.',
  },
  event: {
    type: 'object',
    description:
      'Something that happened (CONTRACT.md §14), with the object as its GET answered at that moment and no ' +
      'personal data. Kept 30 days. `deliveries` only in `GET /v1/events/{id}`.',
    required: ['id', 'object', 'type', 'created', 'data', 'request_id'],
    properties: {
      id: id('evt'),
      object: { const: 'event' },
      type: ref('event_type'),
      created: timestamp,
      data: eventData,
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['endpointId', 'status', 'attempts', 'lastResponseStatus', 'nextAttemptAt'],
          properties: {
            endpointId: id('we'),
            status: { enum: DELIVERY_STATUSES },
            attempts: count,
            lastResponseStatus: nullable({ type: 'integer' }),
            nextAttemptAt: nullable(timestamp),
          },
        },
      },
      request_id: requestId,
    },
  },
  delivered_event: alwaysPresent(
    {
      id: { ...id('evt'), description: 'also the `webhook-id` header: the same on every try' },
      object: { const: 'event' },
      type: ref('event_type'),
      created: timestamp,
      data: eventData,
    },
    'An event as a webhook endpoint receives it (CONTRACT.md §14): the body of the signed POST, as ' +
      '`GET /v1/events/{id}` answers the event, without `deliveries` or `request_id`.',
  ),
  webhook_endpoint: withSecret(
    object(
      'webhook_endpoint',
      'we',
      {
        url: { type: 'string', format: 'uri' },
        enabledEvents: {
          anyOf: [EVERY_EVENT_TYPE, { type: 'array', items: ref('event_type'), minItems: 1 }],
          description: '`["*"]` for every type',
        },
        description: nullable(str),
        status: { enum: ENDPOINT_STATUSES },
        disabledReason: { ...nullable(str), description: 'why it was disabled, when the service disabled it' },
        createdAt: timestamp,
        updatedAt: timestamp,
      },
      'Where events are delivered, signed per Standard Webhooks 1.0 (CONTRACT.md §14).',
    ),
  ),
  webhook_endpoint_recovery: {
    type: 'object',
    required: ['object', 'endpointId', 'since', 'deliveries', 'request_id'],
    properties: {
      object: { const: 'webhook_endpoint_recovery' },
      endpointId: id('we'),
      since: timestamp,
      deliveries: { ...count, description: 'failed deliveries sent again' },
      request_id: requestId,
    },
  },
  app_webhook_receipt: {
    type: 'object',
    required: ['object', 'request_id'],
    description: 'handled (`app/uninstalled`), or kept and queued to be handled durably (compliance topics)',
    properties: { object: { const: 'webhook_receipt' }, request_id: requestId },
  },
  order_webhook_receipt: {
    type: 'object',
    required: ['object', 'syncJobIds', 'request_id'],
    properties: {
      object: { const: 'webhook_receipt' },
      syncJobIds: {
        type: 'array',
        items: id('sj'),
        description: 'one job per supplier, `pending` when the response is sent; a redelivery answers the same ids',
      },
      request_id: requestId,
    },
  },
  fulfillment_webhook_receipt: {
    type: 'object',
    required: ['object', 'request_id'],
    properties: { object: { const: 'webhook_receipt' }, request_id: requestId },
  },
  error: alwaysPresent(
    {
      error: {
        type: 'object',
        required: ['type', 'code', 'message'],
        properties: {
          type: { enum: ['invalid_request_error', 'authentication_error', 'api_error'] },
          code: {
            type: 'string',
            description: 'stable, for programs; new codes may be added',
            examples: ['validation_failed', 'resource_missing', 'idempotency_key_reused'],
          },
          message: { type: 'string', description: 'for people; may change' },
          param: { type: 'string', description: 'the input at fault, as a dotted path (`pricingConfig.value`)' },
        },
      },
      request_id: requestId,
    },
    'Every error (CONTRACT.md §3).',
  ),
};

export const headers = {
  'Request-Id': {
    description: "The request id, the same as the body's `request_id`; quote it when asking for help.",
    required: true,
    schema: requestId,
  },
  'Retry-After': {
    description: 'On a 429: the seconds after which the key may make changes again.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this response is the stored one of an earlier request with the same `Idempotency-Key` ' +
      '(CONTRACT.md §9); absent otherwise.',
    schema: { const: 'true' },
  },
};

/** HTTP status → what it means and which codes it carries (CONTRACT.md §3). */
export const errorStatuses: Record<number, string> = {
  400: 'The request is invalid',
  401: 'Authentication failed',
  404: 'No such resource (or it belongs to another owner), or no such route',
  409: 'A conflict',
  413: 'The body is too large (API 64 KiB, webhooks 1 MiB)',
  415: 'The body is not `application/json`',
  429: 'The API key has made its changes of this second (`-c apiKeyRateLimit`); retry after `Retry-After` seconds',
  500: 'An internal error; the message says nothing internal',
};
