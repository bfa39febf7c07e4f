/**
 * The GraphQL documents of CONTRACT §15 on Shopify (PLATFORM-API.md, "Refunds and returns", and its
 * platform notes on refunds and returns, §6, where each was first checked against the 2026-10 schema).
 * Part of `SHOPIFY_DOCUMENTS` (storeplatform-b-documents.ts), so `test/unit/shopify-documents.test.ts`
 * validates and costs each one, and the simulator executes them. None takes an idempotency key (Shopify has
 * none for edits and returns): edits converge by absolute quantities, a return is found again by its marker.
 * The service sends no `refundCreate`; should one be added, its `@idempotent(key:)` is required at run time
 * (a test fails without it).
 */

/** What a page of the after-sale documents reads at once (requested costs in shopify-documents.test.ts). */
export const AFTER_SALE_PAGE_SIZES = {
  /** Lines of a supplier order (its current and unfulfilled quantities), a page. */
  orderLines: 100,
  /** The lines of an edit session: an order is placed with at most 250 lines, so one page holds them all. */
  editLines: 250,
  /** Returnable fulfillments a page, and the lines of each (more by `returnableFulfillmentLines`). */
  returnableFulfillments: 5,
  returnableLines: 50,
  /** Returns of an order a page, and the lines of each (more by `returnLineItems`). */
  returns: 5,
  returnLines: 20,
  /** An order's refunds (the list has no cursor) and each one's lines (more by `refundLineItems`). */
  refunds: 10,
  refundLines: 10,
} as const;

/** A return line as every document reads it: the marker is in `returnReasonNote`. */
const RETURN_LINE = `id quantity returnReasonNote
          ... on ReturnLineItem { returnReason fulfillmentLineItem { id lineItem { id } } }`;

/** A refund line as `refunds/create` carries it: what it refunds, how, and its subtotal. */
const REFUND_LINE = `id quantity restockType lineItem { id }
          subtotalSet { shopMoney { amount currencyCode } }`;

/** A supplier order's lines: as placed (`quantity`), held (`currentQuantity`) and not yet shipped. */
const supplierOrderLines = `query supplierOrderLines($id: ID!, $first: Int!, $after: String) {
  order(id: $id) {
    id cancelledAt
    lineItems(first: $first, after: $after) {
      nodes { id quantity currentQuantity unfulfilledQuantity }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** Open an edit: the calculated lines (`CalculatedLineItem/<n>` for `LineItem/<n>`) and what is editable. */
const orderEditBegin = `mutation orderEditBegin($id: ID!, $lines: Int!) {
  orderEditBegin(id: $id) {
    calculatedOrder {
      id
      lineItems(first: $lines) {
        nodes { id quantity editableQuantity restockable }
        pageInfo { hasNextPage endCursor }
      }
    }
    orderEditSession { id }
    userErrors { field message }
  }
}`;

/** Stage a line's new absolute quantity; `restock` false for the supplier's custom lines. */
const orderEditSetQuantity = `mutation orderEditSetQuantity(
  $id: ID!
  $lineItemId: ID!
  $quantity: Int!
  $restock: Boolean
) {
  orderEditSetQuantity(id: $id, lineItemId: $lineItemId, quantity: $quantity, restock: $restock) {
    calculatedLineItem { id quantity editableQuantity }
    userErrors { field message }
  }
}`;

/** Apply the staged quantities, the customer not told; answers the order's lines as they now stand. */
const orderEditCommit = `mutation orderEditCommit($id: ID!, $staffNote: String, $lines: Int!) {
  orderEditCommit(id: $id, notifyCustomer: false, staffNote: $staffNote) {
    order {
      id
      lineItems(first: $lines) { nodes { id quantity currentQuantity unfulfilledQuantity } }
    }
    userErrors { field message }
  }
}`;

/** What can still be returned, per fulfillment line item (returned and refunded units left out). */
const returnableFulfillments = `query returnableFulfillments(
  $orderId: ID!
  $first: Int!
  $after: String
  $lines: Int!
) {
  returnableFulfillments(orderId: $orderId, first: $first, after: $after) {
    nodes {
      id
      fulfillment { id }
      returnableFulfillmentLineItems(first: $lines) {
        nodes { quantity fulfillmentLineItem { id lineItem { id } } }
        pageInfo { hasNextPage endCursor }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** A returnable fulfillment's lines after a cursor: what a page of `returnableFulfillments` left out. */
const returnableFulfillmentLines = `query returnableFulfillmentLines($id: ID!, $first: Int!, $after: String) {
  returnableFulfillment(id: $id) {
    id
    returnableFulfillmentLineItems(first: $first, after: $after) {
      nodes { quantity fulfillmentLineItem { id lineItem { id } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** Open a return, approved (`OPEN`): the reseller already approved it. */
const returnCreate = `mutation returnCreate($returnInput: ReturnInput!, $lines: Int!) {
  returnCreate(returnInput: $returnInput) {
    return {
      id name status createdAt
      returnLineItems(first: $lines) { nodes { ${RETURN_LINE} } }
    }
    userErrors { field message code }
  }
}`;

/** An order's returns, a page at a time: a return an earlier attempt made (its marker), and the poll's. */
const orderReturns = `query orderReturns($id: ID!, $first: Int!, $after: String, $lines: Int!) {
  order(id: $id) {
    id
    returns(first: $first, after: $after) {
      nodes {
        id name status createdAt closedAt
        returnLineItems(first: $lines) { nodes { ${RETURN_LINE} } pageInfo { hasNextPage endCursor } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** A return with its lines after a cursor, or from the first (a cancellation's check, a page left out). */
const returnLineItems = `query returnLineItems($id: ID!, $first: Int!, $after: String) {
  return(id: $id) {
    id name status createdAt closedAt
    returnLineItems(first: $first, after: $after) { nodes { ${RETURN_LINE} } pageInfo { hasNextPage endCursor } }
  }
}`;

/** Cancel a return (refused once work was done on it), the customer not told. */
const returnCancel = `mutation returnCancel($id: ID!) {
  returnCancel(id: $id, notifyCustomer: false) {
    return { id status }
    userErrors { field message code }
  }
}`;

/** An order's refunds as `refunds/create` carries them (the list has no cursor: `first` is all there is). */
const orderRefunds = `query orderRefunds($id: ID!, $refunds: Int!, $lines: Int!) {
  order(id: $id) {
    id
    refunds(first: $refunds) {
      id createdAt note
      return { id }
      refundLineItems(first: $lines) { nodes { ${REFUND_LINE} } pageInfo { hasNextPage endCursor } }
      refundShippingLines(first: 5) { nodes { subtotalAmountSet { shopMoney { amount currencyCode } } } }
    }
  }
}`;

/** A refund's lines after a cursor: what a page of `orderRefunds` left out. */
const refundLineItems = `query refundLineItems($id: ID!, $first: Int!, $after: String) {
  refund(id: $id) {
    id
    refundLineItems(first: $first, after: $after) { nodes { ${REFUND_LINE} } pageInfo { hasNextPage endCursor } }
  }
}`;

export const AFTER_SALE_DOCUMENTS = {
  supplierOrderLines,
  orderEditBegin,
  orderEditSetQuantity,
  orderEditCommit,
  returnableFulfillments,
  returnableFulfillmentLines,
  returnCreate,
  orderReturns,
  returnLineItems,
  returnCancel,
  orderRefunds,
  refundLineItems,
} as const;
