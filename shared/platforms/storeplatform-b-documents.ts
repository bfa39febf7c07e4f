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

/** Find an order by its `source_identifier` (Lookups). */
const ordersBySourceIdentifier = `query ordersBySourceIdentifier($query: String!) {
  orders(first: 1, query: $query) { nodes { id sourceIdentifier lineItems(first: 250) { nodes { id } } } }
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

export const SHOPIFY_DOCUMENTS = {
  orderCreate,
  ordersBySourceIdentifier,
  orderFulfillmentOrders,
  fulfillmentCreate,
} as const;

export type ShopifyDocumentName = keyof typeof SHOPIFY_DOCUMENTS;
