import { coerceInputValue, getVariableValues, type OperationDefinitionNode, parse, validate, visit } from 'graphql';
import { requestedQueryCost, SHOPIFY_MAX_QUERY_COST } from '../../lib/local/shopify-cost.js';
import { shopifyAdminSchema } from '../../lib/local/shopify-schema.js';
import { buildSupplierOrder, readResellerOrder, stringifyExact } from '../../shared/domain/orders.js';
import {
  changedSinceSearch,
  changedSinceVariables,
  lineItemsByFulfillmentOrder,
  orderCancelReason,
  orderCreateVariables,
  orderUpdateInput,
  sourceIdentifierSearch,
  trackingInfo,
} from '../../shared/platforms/storeplatform-b.js';
import { returnReasonOf } from '../../shared/platforms/storeplatform-b-after-sale.js';
import { AFTER_SALE_PAGE_SIZES as AFTER } from '../../shared/platforms/storeplatform-b-after-sale-documents.js';
import { shopifyTopic } from '../../shared/platforms/storeplatform-b-connect.js';
import { SHOPIFY_PAGE_SIZES as PAGE, SHOPIFY_DOCUMENTS } from '../../shared/platforms/storeplatform-b-documents.js';

/**
 * Every document the storeplatform_b adapter sends, checked against the schema Shopify publishes for
 * its Admin API (the introspection `@shopify/dev-mcp` ships): a field, an argument or a type Shopify
 * does not have fails here as it would there. Later documents join the table and are checked too.
 */
const schema = shopifyAdminSchema();

/** The variables a document is sent with must coerce to its variable types, as Shopify coerces them. */
const variableErrors = (document: string, variables: Record<string, unknown>) => {
  const operation = parse(document).definitions[0] as OperationDefinitionNode;
  const result = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  return 'errors' in result && result.errors ? result.errors.map((e) => e.message) : [];
};

const order = (() => {
  const reading = readResellerOrder(
    JSON.stringify({
      id: 5551234,
      currency: 'USD',
      email: 'a@example.com',
      note: 'Leave at the back door',
      note_attributes: [{ name: 'gift-wrap', value: 'yes' }],
      line_items: [
        {
          id: 1,
          variant_id: 11,
          sku: 'MUG-1',
          title: 'Mug',
          variant_title: 'Red',
          quantity: 2,
          price: '13.00',
          vendor: 'Acme',
          properties: [{ name: 'Engraving', value: 'Happy Birthday' }],
        },
      ],
      shipping_lines: [{ title: 'Standard', price: '5.00' }],
      shipping_address: { name: 'Ada B Lovelace', address1: '1 Main St', city: 'X', zip: '1', country_code: 'US' },
    }),
  );
  if (!reading.ok) throw new Error(reading.message);
  return buildSupplierOrder({
    resellerShopDomain: 'reseller.myshopify.com',
    syncJobId: 'sj_1',
    order: reading.order,
    lineItems: reading.order.lineItems,
    pricing: { type: 'percentage', value: 30 },
  });
})();

/** The variables the adapter sends with each document of the table, as it builds them (its page sizes). */
const VARIABLES: Record<keyof typeof SHOPIFY_DOCUMENTS, Record<string, unknown>> = {
  // Sent as JSON, as the adapter sends it: kept reseller values written verbatim.
  orderCreate: JSON.parse(stringifyExact(orderCreateVariables(order))),
  ordersBySourceIdentifier: {
    query: sourceIdentifierSearch("reseller.myshopify.com:it's:1:sj_1"),
    lines: PAGE.lookupLines,
  },
  orderLineItems: { id: 'gid://shopify/Order/7002', first: PAGE.lines, after: 'eyJhIjoxfQ' },
  orderFulfillmentOrders: {
    id: 'gid://shopify/Order/7002',
    first: PAGE.fulfillmentOrders,
    after: 'eyJhIjoxfQ',
    lines: PAGE.fulfillmentOrderLines,
  },
  fulfillmentOrderLineItems: { id: 'gid://shopify/FulfillmentOrder/1', first: PAGE.lines, after: 'eyJhIjoxfQ' },
  orderFulfillmentTracking: { id: 'gid://shopify/Order/7002', first: PAGE.trackedFulfillments },
  fulfillmentCreate: {
    fulfillment: {
      lineItemsByFulfillmentOrder: lineItemsByFulfillmentOrder([
        {
          fulfillmentOrderId: 'gid://shopify/FulfillmentOrder/1',
          id: 'gid://shopify/FulfillmentOrderLineItem/2',
          lineItemId: '3',
          remainingQuantity: 2,
        },
      ]),
      trackingInfo: trackingInfo({ company: 'UPS', number: '1Z9', numbers: ['1Z9'], url: null, urls: [] }),
      notifyCustomer: true,
    },
  },
  orderCancelled: { id: 'gid://shopify/Order/7002' },
  jobDone: { id: 'gid://shopify/Job/4e1b9a40-0000-4000-8000-000000000000' },
  orderCancel: { orderId: 'gid://shopify/Order/7002', reason: orderCancelReason('customer') },
  orderUpdate: {
    input: orderUpdateInput('gid://shopify/Order/7002', {
      shippingAddress: { first_name: 'Ada', last_name: 'Lovelace', address1: '2 Side St', country_code: 'GB' },
      email: 'new@example.com',
      note: null,
      noteAttributes: [{ name: 'gift-wrap', value: 'no' }],
    }),
  },
  fulfillmentStatus: { id: 'gid://shopify/Fulfillment/9001' },
  fulfillmentTrackingInfoUpdate: {
    fulfillmentId: 'gid://shopify/Fulfillment/9001',
    trackingInfoInput: trackingInfo({ company: null, number: null, numbers: ['A', 'B'], url: null, urls: ['u'] }),
  },
  fulfillmentCancel: { id: 'gid://shopify/Fulfillment/9001' },
  ordersChangedSince: changedSinceVariables('2026-01-01T00:00:00.000Z', {
    tag: 'reseller-order',
    cursor: 'eyJhIjoxfQ',
  }),
  orderFulfillmentIds: { id: 'gid://shopify/Order/7002', first: PAGE.fulfillmentIds },
  fulfillmentLineItems: { id: 'gid://shopify/Fulfillment/9001', first: PAGE.lines, after: 'eyJhIjoxfQ' },
  orderBeforeRelease: {
    id: 'gid://shopify/Order/7002',
    lines: PAGE.releaseLines,
    shippingLines: PAGE.releaseShippingLines,
  },
  webhookSubscriptions: { first: PAGE.webhookSubscriptions, after: 'eyJhIjoxfQ' },
  webhookSubscriptionCreate: {
    topic: shopifyTopic('app/uninstalled'),
    webhookSubscription: { uri: 'https://api.example.com/v1/app/webhook' },
  },
  tagsAdd: { id: 'gid://shopify/Order/7002', tags: ['routed-acme'] },
  // CONTRACT §15, as storeplatform-b-after-sale.ts sends them.
  orderAfterSale: {
    id: 'gid://shopify/Order/7002',
    lines: PAGE.changedOrderLines,
    fulfillments: PAGE.changedFulfillments,
    fulfillmentLines: PAGE.changedFulfillmentLines,
  },
  supplierOrderLines: { id: 'gid://shopify/Order/7002', first: AFTER.orderLines, after: 'eyJhIjoxfQ' },
  orderEditBegin: { id: 'gid://shopify/Order/7002', lines: AFTER.editLines },
  orderEditSetQuantity: {
    id: 'gid://shopify/CalculatedOrder/123',
    lineItemId: 'gid://shopify/CalculatedLineItem/456',
    quantity: 0,
    restock: false,
  },
  orderEditCommit: {
    id: 'gid://shopify/CalculatedOrder/123',
    staffNote: 'reseller refunded units before shipping',
    lines: AFTER.editLines,
  },
  returnableFulfillments: {
    orderId: 'gid://shopify/Order/7002',
    first: AFTER.returnableFulfillments,
    after: 'eyJhIjoxfQ',
    lines: AFTER.returnableLines,
  },
  returnableFulfillmentLines: { id: 'gid://shopify/ReturnableFulfillment/1', first: AFTER.returnableLines },
  returnCreate: {
    returnInput: {
      orderId: 'gid://shopify/Order/7002',
      returnLineItems: [
        {
          fulfillmentLineItemId: 'gid://shopify/FulfillmentLineItem/9101',
          quantity: 1,
          returnReason: returnReasonOf('unwanted'),
          returnReasonNote: 'reseller return 555 (reseller.myshopify.com #1001) sj_1',
        },
      ],
    },
    lines: 1,
  },
  orderReturns: { id: 'gid://shopify/Order/7002', first: AFTER.returns, after: 'eyJhIjoxfQ', lines: AFTER.returnLines },
  returnLineItems: { id: 'gid://shopify/Return/777', first: AFTER.returnLines, after: 'eyJhIjoxfQ' },
  returnCancel: { id: 'gid://shopify/Return/777' },
  orderRefunds: { id: 'gid://shopify/Order/7002', refunds: AFTER.refunds, lines: AFTER.refundLines },
  refundLineItems: { id: 'gid://shopify/Refund/890088186047892319', first: AFTER.refundLines, after: 'eyJhIjoxfQ' },
  // Supplier service levels (CONTRACT.md §16.1).
  shopTimezone: {},
  fulfillmentOrdersSetFulfillmentDeadline: {
    fulfillmentOrderIds: ['gid://shopify/FulfillmentOrder/7001'],
    fulfillmentDeadline: '2026-11-04T04:59:59.000Z',
  },
};

/**
 * The mutations on which Shopify requires `@idempotent(key:)` at run time (their descriptions say so: "the
 * idempotency key is required"), though the schema declares the directive optional: `validate` cannot tell.
 */
const KEYED_MUTATIONS = Object.values(schema.getMutationType()?.getFields() ?? {})
  .filter((field) => /idempotency key is required/i.test(field.description ?? ''))
  .map((field) => field.name);

/** The fields of a document that Shopify requires a key on and that carry no `@idempotent(key: …)`. */
const missingIdempotencyKeys = (document: string): string[] => {
  const missing: string[] = [];
  visit(parse(document), {
    Field(node) {
      if (!KEYED_MUTATIONS.includes(node.name.value)) return;
      const keyed = node.directives?.some(
        (directive) =>
          directive.name.value === 'idempotent' && directive.arguments?.some((arg) => arg.name.value === 'key'),
      );
      if (!keyed) missing.push(node.name.value);
    },
  });
  return missing;
};

describe("storeplatform_b's documents against Shopify's published Admin schema (2026-10)", () => {
  it('sends @idempotent(key:) on every mutation Shopify requires it on (refundCreate, if one is ever sent)', () => {
    expect(KEYED_MUTATIONS).toEqual(expect.arrayContaining(['refundCreate', 'inventoryAdjustQuantities']));
    for (const [name, document] of Object.entries(SHOPIFY_DOCUMENTS)) {
      expect([name, missingIdempotencyKeys(document)]).toEqual([name, []]);
    }
    // The check bites: a refundCreate without the directive (valid for the schema) is named, one with it is not.
    const refund = (directive: string) => `mutation refundCreate($input: RefundInput!) {
      refundCreate(input: $input) ${directive} { refund { id } userErrors { field message } }
    }`;
    expect(validate(schema, parse(refund(''))).map((e) => e.message)).toEqual([]);
    expect(missingIdempotencyKeys(refund(''))).toEqual(['refundCreate']);
    expect(missingIdempotencyKeys(refund('@idempotent(key: "rfd:shop:1:sj_1")'))).toEqual([]);
    expect(validate(schema, parse(refund('@idempotent(key: "rfd:shop:1:sj_1")')))).toEqual([]);
  });

  it.each(Object.entries(SHOPIFY_DOCUMENTS))('%s is a valid document', (_name, document) => {
    expect(validate(schema, parse(document)).map((e) => e.message)).toEqual([]);
  });

  it.each(Object.entries(SHOPIFY_DOCUMENTS))('%s is sent with variables of its types', (name, document) => {
    expect(variableErrors(document, VARIABLES[name as keyof typeof SHOPIFY_DOCUMENTS])).toEqual([]);
  });

  it('maps the supplier order onto OrderCreateOrderInput: priceSet, properties, attributes', () => {
    const { order: input } = VARIABLES.orderCreate as { order: Record<string, any> };
    expect(input).toMatchObject({
      sourceIdentifier: 'reseller.myshopify.com:5551234:sj_1',
      currency: 'USD',
      note: 'Leave at the back door',
      customAttributes: [
        { key: 'gift-wrap', value: 'yes' },
        { key: 'reseller_order', value: '5551234' },
      ],
      tags: ['reseller-order'],
      shippingAddress: { firstName: 'Ada', lastName: 'B Lovelace', address1: '1 Main St', countryCode: 'US' },
    });
    expect(input.lineItems).toEqual([
      {
        title: 'Mug',
        variantTitle: 'Red',
        sku: 'MUG-1',
        quantity: 2,
        priceSet: { shopMoney: { amount: '10.00', currencyCode: 'USD' } },
        vendor: 'Acme',
        properties: [{ name: 'Engraving', value: 'Happy Birthday' }],
        requiresShipping: true,
      },
    ]);
    expect(input.shippingLines).toEqual([
      { title: 'Standard', priceSet: { shopMoney: { amount: '5.00', currencyCode: 'USD' } } },
    ]);
    // The reseller's variant id names no variant of the supplier's shop.
    expect(input.lineItems[0]).not.toHaveProperty('variantId');
  });

  it('rejects the invented document storeplatform_b used to send (OrderInput, idempotencyKey)', () => {
    const invented = `mutation orderCreate($order: OrderInput!, $idempotencyKey: String!) {
      orderCreate(order: $order, idempotencyKey: $idempotencyKey) { order { id } userErrors { field message } }
    }`;
    const errors = validate(schema, parse(invented)).map((e) => e.message);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Unknown argument "idempotencyKey"'),
        expect.stringContaining('"OrderInput!"'),
      ]),
    );
  });

  it('rejects variables Shopify would not coerce (a quantity that is not an Int, an unknown currency)', () => {
    const bad = JSON.parse(JSON.stringify(VARIABLES.orderCreate));
    bad.order.lineItems[0].quantity = '2';
    bad.order.currency = 'ZZZ';
    expect(variableErrors(SHOPIFY_DOCUMENTS.orderCreate, bad)).toHaveLength(2);
  });

  it('never ships more than remains of a fulfillment order line, and only the lines asked for', () => {
    const lines = [
      { fulfillmentOrderId: 'fo1', id: 'fol1', lineItemId: '11', remainingQuantity: 2 },
      { fulfillmentOrderId: 'fo1', id: 'fol2', lineItemId: '12', remainingQuantity: 1 },
      { fulfillmentOrderId: 'fo2', id: 'fol3', lineItemId: '13', remainingQuantity: 4 },
    ];
    expect(
      lineItemsByFulfillmentOrder(lines, [
        { id: '11', quantity: 5 },
        { id: '13', quantity: 1 },
      ]),
    ).toEqual([
      { fulfillmentOrderId: 'fo1', fulfillmentOrderLineItems: [{ id: 'fol1', quantity: 2 }] },
      { fulfillmentOrderId: 'fo2', fulfillmentOrderLineItems: [{ id: 'fol3', quantity: 1 }] },
    ]);
    expect(lineItemsByFulfillmentOrder(lines)).toHaveLength(2);
  });

  it('maps a REST cancel reason onto OrderCancelReason and quotes the search of orders changed since', () => {
    expect(['customer', 'Inventory', 'fraud', 'because'].map(orderCancelReason)).toEqual([
      'CUSTOMER',
      'INVENTORY',
      'FRAUD',
      'OTHER',
    ]);
    expect(changedSinceSearch('2026-01-01T00:00:00Z')).toBe("updated_at:>='2026-01-01T00:00:00Z'");
    expect(changedSinceSearch('2026-01-01T00:00:00Z', "it's")).toBe("updated_at:>='2026-01-01T00:00:00Z' tag:'it\\'s'");
  });

  it('sends only the order changes present, the address as a MailingAddressInput', () => {
    expect(orderUpdateInput('gid://shopify/Order/1', {})).toBeNull();
    expect(orderUpdateInput('gid://shopify/Order/1', { note: null })).toEqual({
      id: 'gid://shopify/Order/1',
      note: null,
    });
    expect(VARIABLES.orderUpdate.input).toEqual({
      id: 'gid://shopify/Order/7002',
      shippingAddress: { firstName: 'Ada', lastName: 'Lovelace', address1: '2 Side St', countryCode: 'GB' },
      email: 'new@example.com',
      note: null,
      customAttributes: [{ key: 'gift-wrap', value: 'no' }],
    });
  });

  it.each(Object.entries(SHOPIFY_DOCUMENTS))('%s costs at most 1,000 points with its page sizes', (name, doc) => {
    const cost = requestedQueryCost(schema, doc, VARIABLES[name as keyof typeof SHOPIFY_DOCUMENTS]);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThanOrEqual(SHOPIFY_MAX_QUERY_COST);
  });

  it('costs each document as docs/design.md states (Shopify: connection 2 + first × node, mutation 10)', () => {
    const costs = Object.fromEntries(
      Object.entries(SHOPIFY_DOCUMENTS).map(([name, doc]) => [
        name,
        requestedQueryCost(schema, doc, VARIABLES[name as keyof typeof SHOPIFY_DOCUMENTS]),
      ]),
    );
    expect(costs).toEqual({
      orderCreate: 264,
      ordersBySourceIdentifier: 255,
      orderLineItems: 403,
      orderFulfillmentOrders: 518,
      fulfillmentOrderLineItems: 203,
      orderFulfillmentTracking: 653,
      fulfillmentCreate: 12,
      orderCancelled: 1,
      jobDone: 1,
      orderCancel: 12,
      orderUpdate: 12,
      fulfillmentStatus: 1,
      fulfillmentTrackingInfoUpdate: 12,
      fulfillmentCancel: 12,
      // 787 before CONTRACT §15's probes (`refunds(first: 1)`, `returns(first: 1)`) and `currentQuantity`.
      ordersChangedSince: 817,
      orderFulfillmentIds: 253,
      fulfillmentLineItems: 215,
      orderBeforeRelease: 438,
      webhookSubscriptions: 52,
      webhookSubscriptionCreate: 12,
      tagsAdd: 12,
      // CONTRACT §15 (storeplatform-b-after-sale-documents.ts)
      orderAfterSale: 163,
      supplierOrderLines: 103,
      orderEditBegin: 265,
      orderEditSetQuantity: 12,
      orderEditCommit: 264,
      returnableFulfillments: 772,
      returnableFulfillmentLines: 153,
      returnCreate: 17,
      orderReturns: 318,
      returnLineItems: 63,
      returnCancel: 12,
      orderRefunds: 613,
      refundLineItems: 43,
      shopTimezone: 1,
      fulfillmentOrdersSetFulfillmentDeadline: 11,
    });
  });

  it('counts as Shopify documents it: objects 1, scalars 0, connections and sized lists multiplied', () => {
    const cost = (doc: string, variables = {}) => requestedQueryCost(schema, doc, variables);
    expect(cost('{ shop { id name } }')).toBe(1);
    expect(cost('{ products(first: 10) { edges { node { id title } } pageInfo { hasNextPage } } }')).toBe(12);
    expect(cost('query q($n: Int!) { products(first: $n) { nodes { id } } }', { n: 50 })).toBe(52);
    // Nested connections multiply: 2 + 10 × (1 + (2 + 5 × 1)).
    expect(cost('{ orders(first: 10) { nodes { id lineItems(first: 5) { nodes { id } } } } }')).toBe(82);
    expect(cost('mutation m($id: ID!) { fulfillmentCancel(id: $id) { fulfillment { id } } }')).toBe(11);
    // What the adapter used to send for a page of orders changed since: refused by Shopify.
    const before = SHOPIFY_DOCUMENTS.ordersChangedSince
      .replace('first: $lines', 'first: 250')
      .replace('first: $fulfillments', 'first: 250')
      .replace('first: $fulfillmentLines', 'first: 250');
    expect(cost(before, { ...VARIABLES.ordersChangedSince, first: 250 })).toBeGreaterThan(1_000_000);
  });

  it('coerces the introspection once: every input type the adapter names exists', () => {
    for (const name of ['OrderCreateOrderInput', 'FulfillmentInput', 'FulfillmentTrackingInput', 'MoneyBagInput']) {
      expect(schema.getType(name)).toBeDefined();
    }
    expect(coerceInputValue('USD', schema.getType('CurrencyCode') as never)).toBe('USD');
  });
});
