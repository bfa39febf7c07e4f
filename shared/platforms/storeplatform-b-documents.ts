/**
 * Every GraphQL document the storeplatform_b adapter sends to Shopify's Admin API, in one table:
 * `test/unit/shopify-documents.test.ts` validates each one against the schema Shopify publishes
 * (the introspection `@shopify/dev-mcp` ships), and the simulator executes that same schema, so a
 * field or an argument Shopify does not have fails locally as it would there. Plain strings: the
 * functions' bundles carry no GraphQL library.
 */

/** The Admin API version, in one place: the path and the schema the tests load. */
export const SHOPIFY_API_VERSION = '2026-10';

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
const ordersBySourceIdentifier = `query ordersBySourceIdentifier($query: String!) {
  orders(first: 1, query: $query) {
    nodes { id sourceIdentifier lineItems(first: 250) { nodes { id sku quantity vendor } } }
  }
}`;

/**
 * What a fulfillment on a reseller's order needs first: the order's fulfillment orders with what
 * remains of each line, and its fulfillments with their tracking (an earlier attempt's parcel, found
 * before one is sent again).
 */
const orderFulfillmentOrders = `query orderFulfillmentOrders($id: ID!) {
  order(id: $id) {
    id
    fulfillmentOrders(first: 20) {
      nodes { id status lineItems(first: 250) { nodes { id remainingQuantity lineItem { id } } } }
    }
    fulfillments(first: 250) { id status trackingInfo(first: 10) { company number url } }
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
 * Orders changed since a time (PLATFORM-API.md, "Orders changed since"): oldest change first, with
 * what the REST `orders/create` and `fulfillments/create` webhooks carry.
 */
const ordersChangedSince = `query ordersChangedSince($first: Int!, $after: String, $query: String!) {
  orders(first: $first, after: $after, sortKey: UPDATED_AT, query: $query) {
    nodes {
      id name sourceIdentifier email note currencyCode tags createdAt updatedAt cancelledAt cancelReason
      customAttributes { key value }
      shippingAddress {
        firstName lastName name company address1 address2 city province provinceCode country countryCodeV2 zip phone
      }
      lineItems(first: 250) {
        nodes {
          id quantity vendor sku title variantTitle isGiftCard requiresShipping
          originalUnitPriceSet { shopMoney { amount } }
          customAttributes { key value }
        }
      }
      fulfillments(first: 250) {
        id status createdAt updatedAt
        trackingInfo(first: 10) { company number url }
        fulfillmentLineItems(first: 250) { nodes { quantity lineItem { id } } }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const SHOPIFY_DOCUMENTS = {
  orderCreate,
  ordersBySourceIdentifier,
  orderFulfillmentOrders,
  fulfillmentCreate,
  orderCancelled,
  jobDone,
  orderCancel,
  orderUpdate,
  fulfillmentStatus,
  fulfillmentTrackingInfoUpdate,
  fulfillmentCancel,
  ordersChangedSince,
} as const;

export type ShopifyDocumentName = keyof typeof SHOPIFY_DOCUMENTS;
