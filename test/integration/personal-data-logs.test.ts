import type { SdkCall } from '../../lib/local/protocol.js';
import { findPersonalStrings, fixturePersonalStrings, runLogDir } from '../run-logs.js';
import { createResellerStore, createSourceStore, loggedServiceForSuite, unique } from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * Nothing personal in logs, errors, metrics, events or queue messages (CONTRACT.md §13): orders with
 * unique personal strings are sent down every path that logs or sends (placed, failing until dead
 * through the DLQ, refused by the supplier, edited, fulfilled, cancelled, redacted), and every log
 * line the service wrote, every message any function sent (the DLQs hold those), every event and
 * every API answer is searched for them. Then what the run captured so far (every test file's log
 * lines and queue messages, test/run-logs.ts) is searched for the fixtures' shoppers, as the run's
 * end does again over all of it.
 */

jest.setTimeout(120_000);

describe('no personal data in logs, errors, metrics, events or queue messages', () => {
  const sent: SdkCall[] = [];
  const api = () => service.api('owner_a');

  const { service, log } = loggedServiceForSuite(
    {
      visibilityTimeoutSeconds: 1,
      maxReceiveCount: 2,
      platformTimeoutMs: 1_000,
      onSdkCall: (call) => {
        if (call.service.toLowerCase().includes('sqs')) sent.push(call);
      },
    },
    // Every line, info included, and the metrics' EMF lines: all of them are searched.
    { env: { POWERTOOLS_LOG_LEVEL: 'INFO', POWERTOOLS_METRICS_DISABLED: 'false' }, timeoutMs: 120_000 },
  );

  const shopper = () => {
    const email = `${unique('shopper')}@example.org`;
    const street = `${unique('Birch')} Lane 7`;
    const name = unique('Grace Hopper');
    const phone = `+44-${Date.now()}`;
    return {
      strings: [email, street, name, phone],
      fields: {
        email,
        phone,
        note: `call ${phone}`,
        shipping_address: { name, address1: street, city: 'Z', zip: '9', country_code: 'GB' },
        customer: { id: 7, email, phone },
      },
    };
  };

  it('finds no shopper’s string in a log line, message, event or answer, whatever path the order took', async () => {
    const secret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const suppliers = {
      ok: await createSourceStore(api(), reseller.id, { vendorTag: unique('Ok'), webhookSecret: 'whsec_ok' }),
      down: await createSourceStore(api(), reseller.id, { vendorTag: unique('Down'), accessToken: 'tok_fail500' }),
      refuses: await createSourceStore(api(), reseller.id, { vendorTag: unique('No'), accessToken: 'tok_fail422' }),
    };
    const people = [shopper(), shopper(), shopper()];
    const send = (body: unknown, topic = 'orders/create') =>
      sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret,
        body,
        topic,
      });
    const orders = Object.values(suppliers).map((store, i) =>
      orderPayload([{ vendor: store.vendorTag, price: '9.00' }], people[i].fields),
    );
    const jobIds: string[] = [];
    for (const order of orders) jobIds.push(...(await send(order)).body.syncJobIds);
    // A body that is not an order (its email where a currency must be) is refused, naming no value.
    const refused = await send({ ...orders[0], currency: people[0].strings[0] });
    expect(refused.status).toBe(400);

    const placed = await jobReaches(api(), jobIds[0], 'completed');
    await jobReaches(api(), jobIds[1], 'dead', 60_000);
    await jobReaches(api(), jobIds[2], 'dead');
    // Edited, fulfilled, then cancelled: each path logs and sends its messages.
    const moved = shopper();
    await send({ ...orders[0], ...moved.fields, updated_at: new Date().toISOString() }, 'orders/updated');
    await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: suppliers.ok.shopDomain,
      secret: 'whsec_ok',
      body: fulfillmentPayload(placed.sourceOrderId),
    });
    await eventually(
      async () => (await api().get(`/v1/sync_jobs/${jobIds[0]}`)).body.fulfillment?.status === 'delivered',
    );
    await send(
      { id: orders[1].id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
      'orders/cancelled',
    );
    const redact = await sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      topic: 'customers/redact',
      body: { shop_domain: reseller.shopDomain, customer: moved.fields.customer, orders_to_redact: [orders[0].id] },
    });
    expect(redact.status).toBe(200);
    await eventually(async () => (await api().get(`/v1/sync_jobs/${jobIds[0]}`)).body.redactedAt !== null);

    const personal = [...people, moved].flatMap((person) => person.strings);
    const leaks = (text: string) => personal.filter((s) => text.includes(s));
    // Every log and metric line the service wrote.
    expect(log.lines().length).toBeGreaterThan(20);
    expect(log.lines().flatMap((line) => leaks(JSON.stringify(line)))).toEqual([]);
    // Every message any function sent: the work queues, and so what their DLQs received.
    const messages = sent.filter((call) => /SendMessage/.test(call.command));
    expect(messages.length).toBeGreaterThan(3);
    expect(messages.flatMap((call) => leaks(JSON.stringify(call.input)))).toEqual([]);
    // Every event, and what the API shows of the jobs, their attempts and the audit log.
    const answers = [
      (await api().get('/v1/events?limit=100')).body,
      (await api().get('/v1/audit_log?limit=100')).body,
      refused.body,
      ...(await Promise.all(jobIds.map(async (id) => (await api().get(`/v1/sync_jobs/${id}`)).body))),
      ...(await Promise.all(jobIds.map(async (id) => (await api().get(`/v1/sync_jobs/${id}/attempts`)).body))),
    ];
    expect(answers.flatMap((answer) => leaks(JSON.stringify(answer)))).toEqual([]);
  });

  it('finds none of the fixtures’ shoppers in what the run captured so far (test/run-logs.ts)', () => {
    // The same search ends the whole run (jest's globalTeardown), over every file's logs and messages.
    const strings = fixturePersonalStrings();
    expect(strings).toEqual(expect.arrayContaining(['customer@example.com', 'bob.norman@hostmail.com']));
    expect(findPersonalStrings(runLogDir(), strings)).toEqual([]);
  });
});
