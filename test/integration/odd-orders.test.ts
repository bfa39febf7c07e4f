import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { lists } from '../../shared/dynamo/keys.js';
import { createResellerStore, createSourceStore, scanAll, serviceForSuite } from './support.js';
import { postSigned, simulator, jobReaches as waitForJob } from './webhooks.js';

jest.setTimeout(240_000);

/**
 * Orders as merchants' shops really send them, and as attackers might (issue 12, "What was seen"):
 * through the local front, DynamoDB Local, the SQS emulator and the platform simulator. Bodies are
 * written as raw text, because a JavaScript object cannot even hold most of these numbers.
 */

let reseller: any;
const SECRET = 'whsec_odd_orders';
const jobReaches = (id: string, status: string, timeoutMs = 60_000) => waitForJob(api(), id, status, timeoutMs);

const { service, api } = serviceForSuite({ visibilityTimeoutSeconds: 1 });
beforeAll(async () => {
  reseller = await createResellerStore(api(), { webhookSecret: SECRET, shopDomain: 'odd-orders.myshopify.com' });
}, 90_000);

/** A signed `orders/create` with exactly these bytes. */
const sendRaw = async (raw: string) => {
  const res = await postSigned(service.runtime.apiUrl, '/v1/orders/webhook', raw, {
    shopDomain: reseller.shopDomain,
    secret: SECRET,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text };
};

/** What the simulator holds for a shop, as text: its numbers are exactly what the service sent. */
const simOrdersText = async (shopDomain: string) =>
  (await fetch(`${service.runtime.simulator!.url}/_sim/orders?shopDomain=${shopDomain}`)).text();
const simOrders = (shopDomain: string) => simulator(service.runtime.simulator!.url).orders(shopDomain);

let sequence = 0;
const supplier = async (overrides: Record<string, unknown> = {}) =>
  createSourceStore(api(), reseller.id, { vendorTag: `Odd${++sequence}`, ...overrides });

const item = (vendor: string, fields = '') =>
  `{"title":"Mug","sku":"MUG","quantity":1,"price":"13.00","vendor":${JSON.stringify(vendor)}${fields}}`;
const orderText = (id: string, items: string[], extra = '', currency = 'USD') =>
  `{"id":${id},"currency":"${currency}","email":"a@example.com","line_items":[${items.join(',')}]${extra}}`;

const jobCount = async () =>
  (await scanAll(service.doc, service.tableName)).filter((i) => String(i.PK).startsWith('SJ#') && i.SK === 'SJ').length;

describe('exact ids', () => {
  it('keeps two order ids above 2^53 that differ in the last digit as two orders, both placed', async () => {
    const store = await supplier({ pricingConfig: { type: 'percentage', value: 0 } });
    const first = await sendRaw(orderText('9007199254740993', [item(store.vendorTag)]));
    const second = await sendRaw(orderText('9007199254740992', [item(store.vendorTag)]));

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.syncJobIds[0]).not.toBe(first.body.syncJobIds[0]);
    const jobs = await Promise.all([first, second].map((r) => jobReaches(r.body.syncJobIds[0], 'completed')));
    expect(jobs.map((j) => j.externalOrderId)).toEqual(['9007199254740993', '9007199254740992']);
    const placed = (await simOrders(store.shopDomain)).map((o) => o.source_identifier).sort();
    expect(placed).toEqual([
      `${reseller.shopDomain}:9007199254740992:${jobs[1].id}`,
      `${reseller.shopDomain}:9007199254740993:${jobs[0].id}`,
    ]);
  });

  it('treats a numeric id and the string of its digits as one order, even past 2^53', async () => {
    const store = await supplier();
    const number = await sendRaw(orderText('123456789012345678901234567890', [item(store.vendorTag)]));
    const string = await sendRaw(orderText('"123456789012345678901234567890"', [item(store.vendorTag)]));
    expect(string.body.syncJobIds).toEqual(number.body.syncJobIds);
  });

  it('keeps a 21-digit variant_id exactly, all the way to the supplier', async () => {
    const store = await supplier();
    const res = await sendRaw(orderText('70001', [item(store.vendorTag, ',"variant_id":123456789012345678901')]));
    expect(res.status).toBe(200);
    await jobReaches(res.body.syncJobIds[0], 'completed');
    expect(await simOrdersText(store.shopDomain)).toContain('"variant_id":123456789012345678901');
  });
});

describe('any valid payload, kept and passed on as it came', () => {
  it('keeps a 20-digit numeric zip and 1e400 anywhere, exactly', async () => {
    const store = await supplier();
    const extra =
      ',"shipping_address":{"zip":12345678901234567890,"lat":1e400,"lng":-1E-400},' +
      '"note_attributes":[{"name":"n","value":1e400}]';
    const res = await sendRaw(orderText('70002', [item(store.vendorTag, ',"grams":1e400')], extra));
    expect(res.status).toBe(200);
    await jobReaches(res.body.syncJobIds[0], 'completed');
    expect(await simOrdersText(store.shopDomain)).toContain(
      '"shipping_address":{"zip":12345678901234567890,"lat":1e400,"lng":-1E-400}',
    );
  });

  it('keeps a shipping_address nested 40 levels deep, with an empty key', async () => {
    const store = await supplier();
    let address = '{"city":"X","":"empty key"}';
    for (let level = 0; level < 40; level++) address = `{"level${level}":${address},"":${level}}`;
    const res = await sendRaw(orderText('70003', [item(store.vendorTag)], `,"shipping_address":${address}`));
    expect(res.status).toBe(200);
    await jobReaches(res.body.syncJobIds[0], 'completed');
    expect(await simOrdersText(store.shopDomain)).toContain(`"shipping_address":${address}`);
  });

  it('accepts an order nested 100,000 levels deep in a field it does not read', async () => {
    const store = await supplier();
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    const res = await sendRaw(orderText('70004', [item(store.vendorTag)], `,"note":${deep}`));
    expect(res.status).toBe(200);
    await jobReaches(res.body.syncJobIds[0], 'completed');
  });

  it('places a 4,000-item order for one supplier (about 780 KB), every item at its price', async () => {
    const store = await supplier({ pricingConfig: { type: 'percentage', value: 30 } });
    const items = Array.from({ length: 4_000 }, (_, n) =>
      item(
        store.vendorTag,
        `,"id":${10_000_000_000 + n},"variant_id":${20_000_000_000 + n},"properties":[{"name":"engraving","value":` +
          `"${'x'.repeat(40)}"}]`,
      ),
    );
    const raw = orderText('70005', items, ',"shipping_lines":[{"title":"Freight","price":"50.00"}]');
    expect(raw.length).toBeGreaterThan(700_000);
    expect(raw.length).toBeLessThan(1024 * 1024);

    const res = await sendRaw(raw);

    expect(res.status).toBe(200);
    const [job] = await Promise.all([jobReaches(res.body.syncJobIds[0], 'completed', 120_000)]);
    expect(job.status).toBe('completed');
    const [placed] = await simOrders(store.shopDomain);
    expect(placed.line_items).toHaveLength(4_000);
    expect(new Set(placed.line_items.map((i: any) => i.price))).toEqual(new Set(['10.00']));
  });
});

describe('fields the service reads, checked with their param', () => {
  it.each([
    ['1e20', 'line_items.0.quantity'],
    ['9007199254740992', 'line_items.0.quantity'],
    ['1000001', 'line_items.0.quantity'],
    ['0', 'line_items.0.quantity'],
    ['2.5', 'line_items.0.quantity'],
    ['"2"', 'line_items.0.quantity'],
  ])('refuses a quantity of %s with 400 naming %s, and writes nothing', async (quantity, param) => {
    const before = await jobCount();
    const raw = `{"id":70100,"currency":"USD","line_items":[{"quantity":${quantity},"price":"1.00","vendor":"x"}]}`;
    const res = await sendRaw(raw);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
    expect(await jobCount()).toBe(before);
  });

  it.each([
    ['{"id":-1,"currency":"USD","line_items":[]}', 'id'],
    ['{"id":1.5,"currency":"USD","line_items":[]}', 'id'],
    [`{"id":"${'x'.repeat(101)}","currency":"USD","line_items":[]}`, 'id'],
    ['{"id":1,"currency":"usd","line_items":[]}', 'currency'],
    ['{"id":1,"currency":"USD","line_items":{}}', 'line_items'],
    ['{"id":1,"currency":"USD","line_items":[1]}', 'line_items.0'],
    ['{"id":1,"currency":"USD","line_items":[{"quantity":1,"price":13,"vendor":"x"}]}', 'line_items.0.price'],
    ['{"id":1,"currency":"USD","line_items":[{"quantity":1,"price":"-1","vendor":"x"}]}', 'line_items.0.price'],
    ['{"id":1,"currency":"USD","line_items":[{"quantity":1,"price":"1","vendor":7}]}', 'line_items.0.vendor'],
    ['{"id":1,"currency":"USD","line_items":[],"shipping_lines":[{"price":"x"}]}', 'shipping_lines.0.price'],
  ])('refuses %s with 400 naming %s', async (raw, param) => {
    const res = await sendRaw(raw);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
  });

  it('refuses a body that is not a JSON object with a 400 and no param', async () => {
    const res = await sendRaw('[1,2,3]');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  });
});

describe('money per ISO 4217', () => {
  it.each([
    ['HUF', '1990.50', '1990.50'],
    ['IQD', '1250.125', '1250.125'],
    ['JPY', '1990', '1990'],
  ])('places %s %s with a markup of 0 at exactly %s', async (currency, price, expected) => {
    const store = await supplier({ pricingConfig: { type: 'percentage', value: 0 } });
    const line = `{"quantity":1,"price":"${price}","vendor":"${store.vendorTag}"}`;
    const res = await sendRaw(orderText(`"${currency}-order"`, [line], '', currency));
    await jobReaches(res.body.syncJobIds[0], 'completed');
    const [placed] = await simOrders(store.shopDomain);
    expect(placed.currency).toBe(currency);
    expect(placed.line_items[0].price).toBe(expected);
  });

  it('makes a job in a currency outside ISO 4217 dead at once, naming it, and calls no supplier', async () => {
    const store = await supplier();
    const res = await sendRaw(orderText('70200', [item(store.vendorTag)], '', 'ZZZ'));
    expect(res.status).toBe(200);
    const dead = await jobReaches(res.body.syncJobIds[0], 'dead');
    expect(dead.attempts).toBe(1);
    expect(dead.errorMessage).toMatch(/ZZZ/);
    expect(await simOrders(store.shopDomain)).toEqual([]);
  });
});

describe('any number of suppliers', () => {
  it('places an order for 101 suppliers (more than a transaction holds); a redelivery adds nothing', async () => {
    const own = await createResellerStore(api(), { webhookSecret: SECRET, shopDomain: 'many-suppliers.myshopify.com' });
    const stores: any[] = [];
    for (let n = 0; n < 101; n++) {
      stores.push(
        await createSourceStore(api(), own.id, { vendorTag: `Many${n}`, shopDomain: `many-${n}.myshopify.com` }),
      );
    }
    const raw = orderText(
      '70300',
      stores.map((s) => item(s.vendorTag)),
    );
    const deliver = async () => {
      const res = await postSigned(service.runtime.apiUrl, '/v1/orders/webhook', raw, {
        shopDomain: own.shopDomain,
        secret: SECRET,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    // As the platform does: a delivery that timed out (a loaded test machine can take more than the
    // function's 10 s for 101 jobs) is delivered again, and must then answer the same jobs.
    const send = async () => {
      let res = await deliver();
      for (let attempt = 1; res.status >= 500 && attempt < 3; attempt++) res = await deliver();
      return res;
    };

    const first = await send();

    expect(first.status).toBe(200);
    expect(first.body.syncJobIds).toHaveLength(101);
    expect(new Set(first.body.syncJobIds).size).toBe(101);
    // 101 supplier orders through one local worker: minutes on a loaded machine.
    for (const id of first.body.syncJobIds) await jobReaches(id, 'completed', 420_000);
    const again = await send();
    expect(again.body.syncJobIds).toEqual(first.body.syncJobIds);
    const counts = await Promise.all(stores.map(async (s) => (await simOrders(s.shopDomain)).length));
    expect(counts).toEqual(stores.map(() => 1));
    // The owner's list of jobs, every shard of it (keys.ts LIST_SHARDS).
    const shards = await Promise.all(
      lists
        .syncJobs('owner_a')
        .all()
        .map((pk) =>
          service.doc.send(
            new QueryCommand({
              TableName: service.tableName,
              IndexName: 'GSI1',
              KeyConditionExpression: 'GSI1PK = :pk',
              ExpressionAttributeValues: { ':pk': pk },
            }),
          ),
        ),
    );
    const jobs = shards.flatMap((shard) => shard.Items ?? []);
    const ofThisOrder = jobs.filter((i) => first.body.syncJobIds.includes(i.PK.slice(3)));
    expect(ofThisOrder).toHaveLength(101);
  }, 600_000);
});
