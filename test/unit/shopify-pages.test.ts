/**
 * storeplatform_b reads an order whole although no document it sends may cost Shopify more than 1,000
 * points (shared/platforms/README.md, "What a document costs"): a page of "orders changed since" holds a few orders
 * with a few lines and fulfillments each, and what it leaves out is read by follow-up documents for that
 * order or fulfillment. Against the simulator, which refuses a document over the limit as Shopify does.
 */

import { adapterFor } from '../../shared/platforms/adapters.js';
import { SHOPIFY_API_VERSION } from '../../shared/platforms/http.js';
import type { ChangedOrder, ShopConnection, Tracking } from '../../shared/platforms/port.js';
import { SHOPIFY_PAGE_SIZES } from '../../shared/platforms/storeplatform-b-documents.js';
import { adaptersAgainstSimulator } from './adapter-simulator.js';

const SHOP = 'supplier.example.com';
const shop: ShopConnection = {
  platform: 'storeplatform_b',
  shopDomain: SHOP,
  accessToken: 'shpat_pages_ok',
  webhookSecret: 'whsec_pages',
};
const adapter = adapterFor('storeplatform_b');
const tracking: Tracking = { company: 'UPS', number: null, numbers: ['S1'], url: null, urls: [] };

interface SimLine {
  id: number;
  quantity: number;
  fulfilled_quantity: number;
}
interface SimOrder {
  id: number;
  line_items: SimLine[];
  fulfillments: Array<{
    id: number;
    tracking_numbers: unknown[];
    line_items: Array<{ id: unknown; quantity: number }>;
  }>;
}

const simulator = adaptersAgainstSimulator();

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${simulator().url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return JSON.parse(await res.text());
};

async function simOrder(id: number): Promise<SimOrder> {
  const res = await fetch(`${simulator().url}/_sim/orders?shopDomain=${SHOP}`);
  const found = (JSON.parse(await res.text()).orders as SimOrder[]).find((order) => order.id === id);
  if (!found) throw new Error(`the simulator has no order ${id}`);
  return found;
}

/** An order of `lines` lines (quantity 2 each) the shop holds, tagged as the service tags its orders. */
const placed = async (name: string, lines: number): Promise<SimOrder> =>
  (
    await post('/_sim/orders', {
      shopDomain: SHOP,
      order: {
        source_identifier: `reseller.example.com:${name}:sj_${name}`,
        currency: 'EUR',
        tags: 'reseller-order',
        line_items: Array.from({ length: lines }, (_, n) => ({
          title: `Item ${n}`,
          sku: `SKU-${name}-${n}`,
          quantity: 2,
          price: '1.00',
          vendor: 'Acme',
        })),
      },
    })
  ).order;

/** The shop ships one of each of these lines itself, with this tracking number. */
const shipped = (order: SimOrder, lines: SimLine[], number: string) =>
  post(`/_sim/orders/${order.id}/fulfillments`, {
    shopDomain: SHOP,
    fulfillment: {
      tracking_company: 'UPS',
      tracking_numbers: [number],
      line_items: lines.map((line) => ({ id: line.id, quantity: 1 })),
    },
  });

/** Every page of "orders changed since", in order. */
async function changedSince(since: string): Promise<ChangedOrder[][]> {
  const pages: ChangedOrder[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await adapter.ordersChangedSince(shop, since, { tag: 'reseller-order', cursor });
    pages.push(page.orders);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
}

const lineIdsOf = (order: ChangedOrder) => (order.payload.line_items as Array<{ id: string }>).map((l) => l.id);
const shopifyCalls = () =>
  simulator()
    .calls()
    .filter((call) => call.path.includes(`/admin/api/${SHOPIFY_API_VERSION}/`));

describe('storeplatform_b: every document under 1,000 points, every order still read whole', () => {
  it('reads an order of 250 lines and 3 fulfillments (one of 120 lines) whole through follow-ups', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const order = await placed('big', 250);
    await shipped(order, order.line_items.slice(0, 120), 'P1');
    await shipped(order, order.line_items.slice(120, 122), 'P2');
    await shipped(order, order.line_items.slice(200, 203), 'P3');
    const stored = await simOrder(order.id);

    const pages = await changedSince(since);

    expect(pages).toHaveLength(1);
    const [changed] = pages[0];
    expect(lineIdsOf(changed)).toEqual(stored.line_items.map((line) => String(line.id)));
    expect(changed.payload.line_items).toContainEqual(
      expect.objectContaining({ sku: 'SKU-big-249', quantity: 2, price: '1.00', vendor: 'Acme' }),
    );
    expect(changed.fulfillments.map((f) => [f.id, f.tracking_numbers, f.line_items])).toEqual(
      stored.fulfillments.map((f) => [
        String(f.id),
        f.tracking_numbers,
        f.line_items.map((line) => ({ id: String(line.id), quantity: line.quantity })),
      ]),
    );
    expect(changed.fulfillments[0].line_items).toHaveLength(120);
    // The page, the order's lines (20 on it, then 100 a page), its fulfillment ids, the one fulfillment the
    // page left out, and the lines of the one of 120 (10 on the page, then 100 a page).
    expect(shopifyCalls()).toHaveLength(1 + 3 + 1 + 1 + 2);
    expect(shopifyCalls().every((call) => call.status === 200)).toBe(true);
  });

  it('answers orders across several pages oldest change first, each whole, the cursor as before', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const orders: SimOrder[] = [];
    for (let n = 0; n < 12; n++) orders.push(await placed(String(n), n === 7 ? 45 : 1));
    // The first order changes last.
    await shipped(orders[0], orders[0].line_items, 'Z1');

    const pages = await changedSince(since);

    const size = SHOPIFY_PAGE_SIZES.changedOrders;
    expect(pages.map((page) => page.length)).toEqual([size, size, 12 - 2 * size]);
    const seen = pages.flat();
    expect(seen.map((order) => order.payload.id)).toEqual([...orders.slice(1), orders[0]].map((o) => String(o.id)));
    const times = seen.map((order) => order.updatedAt);
    expect([...times].sort()).toEqual(times);
    expect(lineIdsOf(seen[6])).toEqual(orders[7].line_items.map((line) => String(line.id)));
    expect(seen.at(-1)?.fulfillments).toEqual([expect.objectContaining({ tracking_numbers: ['Z1'] })]);
  });

  it('ships every line of an order of 250 lines: fulfillment order lines beyond a page read after', async () => {
    const order = await placed('ship', 250);

    await adapter.createFulfillment(shop, String(order.id), tracking, 'ful_1');

    const stored = await simOrder(order.id);
    expect(stored.line_items.every((line) => line.fulfilled_quantity === 2)).toBe(true);
    expect(stored.fulfillments[0].line_items).toHaveLength(250);
    // The fulfillment order's page (50 lines), 100 and 100 more, then the mutation.
    expect(shopifyCalls()).toHaveLength(4);
  });

  it('looks an order of 250 lines up with each line to compare', async () => {
    const order = await placed('look', 250);
    const found = await adapter.findOrder(shop, 'reseller.example.com:look:sj_look');
    expect(found?.lineItemIds).toEqual(order.line_items.map((line) => String(line.id)));
    expect(found?.lines).toHaveLength(250);
  });

  it('the simulator refuses a document over 1,000 points as Shopify does: MAX_COST_EXCEEDED, nothing run', async () => {
    const res = await fetch(`${simulator().url}/${SHOP}/admin/api/${SHOPIFY_API_VERSION}/graphql.json`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Shopify-Access-Token': shop.accessToken },
      body: JSON.stringify({ query: '{ orders(first: 250) { nodes { lineItems(first: 250) { nodes { id } } } } }' }),
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(await res.text());
    expect(body.data).toBeUndefined();
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('Query cost is 63252, which exceeds the single query max cost limit (1000)'),
        extensions: expect.objectContaining({ code: 'MAX_COST_EXCEEDED', cost: 63252, maxCost: 1000 }),
      }),
    ]);
  });
});
