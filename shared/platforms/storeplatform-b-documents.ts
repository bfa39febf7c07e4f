/**
 * Every GraphQL document the storeplatform_b adapter sends to Shopify's Admin API, in one table:
 * `test/unit/shopify-documents.test.ts` validates each one against the schema Shopify publishes
 * (the introspection `@shopify/dev-mcp` ships), and the simulator executes that same schema, so a
 * field or an argument Shopify does not have fails locally as it would there. Plain strings: the
 * functions' bundles carry no GraphQL library.
 */

import { AFTER_SALE_DOCUMENTS } from './storeplatform-b-after-sale-documents.js';

/**
 * The page sizes the adapter sends as the documents' variables. Shopify refuses a document whose
 * requested cost is over 1,000 points before it runs it (MAX_COST_EXCEEDED), and a connection costs
 * 2 + `first` × one node, nested ones multiplied: these keep every document at most about 800
 * (shared/platforms/README.md, "What a document costs"; `test/unit/shopify-documents.test.ts` holds them to it).
 * What a page leaves out is read by a follow-up document for that order or fulfillment.
 */
export const SHOPIFY_PAGE_SIZES = {
  /** Line items a lookup by `source_identifier` reads at once (an order is placed with at most 250). */
  lookupLines: 250,
  /** Orders a page of "orders changed since". */
  changedOrders: 5,
  /** Line items of each order on that page; the rest by `orderLineItems`. */
  changedOrderLines: 20,
  /** Fulfillments of each order on that page; more by `orderFulfillmentIds` and `fulfillmentLineItems`. */
  changedFulfillments: 2,
  /** Line items of each of those fulfillments; the rest by `fulfillmentLineItems`. */
  changedFulfillmentLines: 10,
  /** Line items a follow-up reads a page (an order's, a fulfillment's, a fulfillment order's). */
  lines: 100,
  /** An order's fulfillment ids read at once (`orderFulfillmentIds`, `fulfillments` has no `after`). */
  fulfillmentIds: 250,
  /** Fulfillment orders of an order a page, and the lines of each on that page. */
  fulfillmentOrders: 5,
  fulfillmentOrderLines: 50,
  /** Fulfillments whose tracking a re-sent parcel is compared with (`orderFulfillmentTracking`). */
  trackedFulfillments: 50,
  /** Line items of the order read before it goes (`orderBeforeRelease`); the rest by `orderLineItems`. */
  releaseLines: 100,
  /** Shipping lines of that order (an order has a handful). */
  releaseShippingLines: 10,
  /** Webhook subscriptions a page (a shop has a few per topic). */
  webhookSubscriptions: 50,
} as const;

/** An order line as "orders changed since" and lookups read it (what an orders/create webhook carries). */
const LINE_FIELDS = `id quantity currentQuantity vendor sku title variantTitle isGiftCard requiresShipping
        originalUnitPriceSet { shopMoney { amount } }
        customAttributes { key value }`;

/**
 * A fulfillment as "orders changed since" reads it, its line items aside; `displayStatus` and
 * `inTransitAt` are the carrier's progress (CONTRACT.md §16.2: Shopify's GraphQL has no `shipmentStatus`).
 */
const FULFILLMENT_FIELDS = `id status createdAt updatedAt displayStatus inTransitAt
        trackingInfo(first: 10) { company number url }`;

/** Place the supplier order (PLATFORM-API.md: `orderCreate` with `OrderCreateOrderInput`). */
const orderCreate = `mutation orderCreate($order: OrderCreateOrderInput!, $options: OrderCreateOptionsInput) {
  orderCreate(order: $order, options: $options) {
    order { id lineItems(first: 250) { nodes { id } } }
    userErrors { field message }
  }
}`;

/**
 * Find an order by its `source_identifier` (Lookups), with each line's sku, quantity and vendor: what
 * tells whether an order found by the identifier every job of a reseller order once shared is the job's.
 */
const ordersBySourceIdentifier = `query ordersBySourceIdentifier($query: String!, $lines: Int!) {
  orders(first: 1, query: $query) {
    nodes {
      id sourceIdentifier
      lineItems(first: $lines) { nodes { id sku quantity vendor } pageInfo { hasNextPage endCursor } }
    }
  }
}`;

/** An order's line items after a cursor: what a page of orders or a lookup left out. */
const orderLineItems = `query orderLineItems($id: ID!, $first: Int!, $after: String) {
  order(id: $id) {
    id
    lineItems(first: $first, after: $after) { nodes { ${LINE_FIELDS} } pageInfo { hasNextPage endCursor } }
  }
}`;

/**
 * What a fulfillment on a reseller's order needs first: the order's fulfillment orders with what
 * remains of each line, a page at a time (lines beyond a page by `fulfillmentOrderLineItems`).
 */
const orderFulfillmentOrders = `query orderFulfillmentOrders($id: ID!, $first: Int!, $after: String, $lines: Int!) {
  order(id: $id) {
    id
    fulfillmentOrders(first: $first, after: $after) {
      nodes {
        id status
        lineItems(first: $lines) {
          nodes { id remainingQuantity lineItem { id } }
          pageInfo { hasNextPage endCursor }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** A fulfillment order's lines after a cursor: what a page of `orderFulfillmentOrders` left out. */
const fulfillmentOrderLineItems = `query fulfillmentOrderLineItems($id: ID!, $first: Int!, $after: String) {
  fulfillmentOrder(id: $id) {
    id
    lineItems(first: $first, after: $after) {
      nodes { id remainingQuantity lineItem { id } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** An order's fulfillments with their tracking: a parcel an earlier attempt made, found before one is sent again. */
const orderFulfillmentTracking = `query orderFulfillmentTracking($id: ID!, $first: Int!) {
  order(id: $id) {
    id
    fulfillments(first: $first) { id status trackingInfo(first: 10) { company number url } }
  }
}`;

/** Ship on a reseller's order, through its fulfillment orders. */
const fulfillmentCreate = `mutation fulfillmentCreate($fulfillment: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $fulfillment) {
    fulfillment { id status }
    userErrors { field message }
  }
}`;

/** Whether an order is cancelled (`orderCancel` is asynchronous: done when `cancelledAt` is set). */
const orderCancelled = `query orderCancelled($id: ID!) {
  order(id: $id) { id cancelledAt }
}`;

/** Whether the cancellation job `orderCancel` answered is done. */
const jobDone = `query jobDone($id: ID!) {
  job(id: $id) { id done }
}`;

/**
 * Cancel a supplier order: nothing refunded (`refundMethod` saying so; `refund: false` is deprecated in
 * 2026-10), the stock back (`restock` is required), the customer not told.
 */
const orderCancel = `mutation orderCancel($orderId: ID!, $reason: OrderCancelReason!) {
  orderCancel(
    orderId: $orderId
    reason: $reason
    refundMethod: { originalPaymentMethodsRefund: false }
    restock: true
    notifyCustomer: false
  ) {
    job { id done }
    orderCancelUserErrors { field message code }
  }
}`;

/** Change a supplier order's shipping address, email, note and custom attributes (those present). */
const orderUpdate = `mutation orderUpdate($input: OrderInput!) {
  orderUpdate(input: $input) {
    order { id }
    userErrors { field message }
  }
}`;

/** A fulfillment's status: a cancellation already made is found before one is sent. */
const fulfillmentStatus = `query fulfillmentStatus($id: ID!) {
  fulfillment(id: $id) { id status }
}`;

/** New tracking on a fulfillment of a reseller's order, the customer told. */
const fulfillmentTrackingInfoUpdate = `mutation fulfillmentTrackingInfoUpdate(
  $fulfillmentId: ID!
  $trackingInfoInput: FulfillmentTrackingInput!
) {
  fulfillmentTrackingInfoUpdate(
    fulfillmentId: $fulfillmentId
    trackingInfoInput: $trackingInfoInput
    notifyCustomer: true
  ) {
    fulfillment { id status }
    userErrors { field message }
  }
}`;

/** Cancel a fulfillment of a reseller's order: its quantities are unfulfilled again. */
const fulfillmentCancel = `mutation fulfillmentCancel($id: ID!) {
  fulfillmentCancel(id: $id) {
    fulfillment { id status }
    userErrors { field message }
  }
}`;

/**
 * An order as "orders changed since" reads it; `refunds(first: 1)` and `returns(first: 1)` are probes
 * (CONTRACT §15): an order that has any gets them read whole by `orderRefunds` and `orderReturns`.
 */
const CHANGED_ORDER_FIELDS = `id name sourceIdentifier email note currencyCode tags createdAt updatedAt
      cancelledAt cancelReason displayFinancialStatus test
      customAttributes { key value }
      shippingAddress {
        firstName lastName name company address1 address2 city province provinceCode country countryCodeV2 zip phone
      }
      lineItems(first: $lines) { nodes { ${LINE_FIELDS} } pageInfo { hasNextPage endCursor } }
      fulfillments(first: $fulfillments) {
        ${FULFILLMENT_FIELDS}
        fulfillmentLineItems(first: $fulfillmentLines) {
          nodes { quantity lineItem { id } }
          pageInfo { hasNextPage endCursor }
        }
      }
      refunds(first: 1) { id }
      returns(first: 1) { nodes { id } }`;

/**
 * Orders changed since a time (PLATFORM-API.md, "Orders changed since"): oldest change first, with
 * what the REST `orders/create` and `fulfillments/create` webhooks carry.
 */
const ordersChangedSince = `query ordersChangedSince(
  $first: Int!
  $after: String
  $query: String!
  $lines: Int!
  $fulfillments: Int!
  $fulfillmentLines: Int!
) {
  orders(first: $first, after: $after, sortKey: UPDATED_AT, query: $query) {
    nodes { ${CHANGED_ORDER_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

/**
 * One order with what "orders changed since" reads of each (CONTRACT §15: a supplier's order after the sale,
 * its refunds and returns read by `orderRefunds` and `orderReturns` when the probes show any).
 */
const orderAfterSale = `query orderAfterSale($id: ID!, $lines: Int!, $fulfillments: Int!, $fulfillmentLines: Int!) {
  order(id: $id) { ${CHANGED_ORDER_FIELDS} }
}`;

/** The ids of an order's fulfillments (the list has no `after`): those a page of orders left out. */
const orderFulfillmentIds = `query orderFulfillmentIds($id: ID!, $first: Int!) {
  order(id: $id) { id fulfillments(first: $first) { id } }
}`;

/** A fulfillment with its line items after a cursor: what a page of orders left out of it. */
const fulfillmentLineItems = `query fulfillmentLineItems($id: ID!, $first: Int!, $after: String) {
  fulfillment(id: $id) {
    ${FULFILLMENT_FIELDS}
    fulfillmentLineItems(first: $first, after: $after) {
      nodes { quantity lineItem { id } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/**
 * The reseller's order read again before it goes (CONTRACT §11): payment, risk, test and cancellation,
 * and what its orders/create webhook carries, edits included. `order: null`: the shop no longer has it.
 */
const orderBeforeRelease = `query orderBeforeRelease($id: ID!, $lines: Int!, $shippingLines: Int!) {
  order(id: $id) {
    id name sourceIdentifier email note currencyCode tags createdAt updatedAt cancelledAt cancelReason test
    displayFinancialStatus
    risk { recommendation }
    customAttributes { key value }
    shippingAddress {
      firstName lastName name company address1 address2 city province provinceCode country countryCodeV2 zip phone
    }
    shippingLines(first: $shippingLines) { nodes { title originalPriceSet { shopMoney { amount } } } }
    lineItems(first: $lines) { nodes { ${LINE_FIELDS} } pageInfo { hasNextPage endCursor } }
  }
}`;

/** The shop's webhook subscriptions (CONTRACT §12.1), a page at a time. */
const webhookSubscriptions = `query webhookSubscriptions($first: Int!, $after: String) {
  webhookSubscriptions(first: $first, after: $after) {
    nodes { id topic uri }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** Subscribe the service's address to a topic (`ORDERS_CREATE`, `APP_UNINSTALLED`…). */
const webhookSubscriptionCreate = `mutation webhookSubscriptionCreate(
  $topic: WebhookSubscriptionTopic!
  $webhookSubscription: WebhookSubscriptionInput!
) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: $webhookSubscription) {
    webhookSubscription { id topic uri }
    userErrors { field message }
  }
}`;

/** Tag the reseller's order (CONTRACT §12.5): adds, never removes; a tag already there changes nothing. */
const tagsAdd = `mutation tagsAdd($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) {
    node { id }
    userErrors { field message }
  }
}`;

// ---- supplier service levels (CONTRACT.md §16.1; platform-notes/supplier-sla-platform.md §1, §5)

/** The shop's own IANA zone: no scope needed. */
const shopTimezone = `query shopTimezone {
  shop { id ianaTimezone }
}`;

/** The deadline of an order's fulfillment orders (ids from `orderFulfillmentOrders`); idempotent by value. */
const fulfillmentOrdersSetFulfillmentDeadline = `mutation fulfillmentOrdersSetFulfillmentDeadline(
  $fulfillmentOrderIds: [ID!]!
  $fulfillmentDeadline: DateTime!
) {
  fulfillmentOrdersSetFulfillmentDeadline(
    fulfillmentOrderIds: $fulfillmentOrderIds
    fulfillmentDeadline: $fulfillmentDeadline
  ) {
    success
    userErrors { field message code }
  }
}`;

export const SHOPIFY_DOCUMENTS = {
  shopTimezone,
  fulfillmentOrdersSetFulfillmentDeadline,
  orderCreate,
  ordersBySourceIdentifier,
  orderLineItems,
  orderFulfillmentOrders,
  fulfillmentOrderLineItems,
  orderFulfillmentTracking,
  fulfillmentCreate,
  orderCancelled,
  jobDone,
  orderCancel,
  orderUpdate,
  fulfillmentStatus,
  fulfillmentTrackingInfoUpdate,
  fulfillmentCancel,
  ordersChangedSince,
  orderFulfillmentIds,
  fulfillmentLineItems,
  orderBeforeRelease,
  webhookSubscriptions,
  webhookSubscriptionCreate,
  tagsAdd,
  orderAfterSale,
  ...AFTER_SALE_DOCUMENTS,
} as const;

export type ShopifyDocumentName = keyof typeof SHOPIFY_DOCUMENTS;
