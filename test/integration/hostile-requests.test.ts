import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { SdkCall } from '../../lib/local/protocol.js';
import { authorizer } from '../../lib/routes.js';
import { createResellerStore, REQUEST_ID, serviceForSuite, sourceStoreBody, TEST_KEYS } from './support.js';
import { orderPayload, sendWebhook } from './webhooks.js';

jest.setTimeout(60_000);

/**
 * Unusual and hostile requests through the local front (issue 12): headers on every answer, the
 * `$default` route's 404, methods Node's parser treats apart, ids that cannot be ids, a markup
 * DynamoDB could not store (issue 12); webhook deliveries refused before any read, and a key
 * lookup that fails (issue 32).
 */

const sdkCalls: SdkCall[] = [];
const { service, api } = serviceForSuite({ simulator: false, onSdkCall: (call) => sdkCalls.push(call) });

const expectStandardHeaders = (headers: Headers) => {
  expect(headers.get('cache-control')).toBe('no-store');
  expect(headers.get('x-content-type-options')).toBe('nosniff');
};

/** One raw HTTP/1.1 exchange on a fresh socket: what a client that sends odd request lines sees. */
const rawExchange = (port: number, text: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });

const port = () => Number(new URL(service.runtime.apiUrl).port);

describe('headers on every response', () => {
  it.each([
    ['a 200 list', () => api().get('/v1/reseller_stores')],
    ['a 201 create', () => api().post('/v1/reseller_stores', { name: 'x' })],
    ['a 400 validation error', () => api().get('/v1/sync_jobs?limit=0')],
    ['a 401', () => service.api(null).get('/v1/sync_jobs')],
    ['a 404 of an unknown id', () => api().get(`/v1/sync_jobs/sj_${'0'.repeat(24)}`)],
    ['a 404 of an unknown route', () => api().get('/v1/nothing')],
    ['a 413', () => api().post('/v1/reseller_stores', undefined, { rawBody: 'x'.repeat(70_000) })],
  ])('carry Cache-Control: no-store and X-Content-Type-Options: nosniff on %s', async (_what, send) => {
    const res = await send();
    expect(res.status).toBeGreaterThanOrEqual(200);
    expectStandardHeaders(res.headers);
    expect(res.headers.get('request-id')).toMatch(REQUEST_ID);
  });

  it('are on a webhook answer too (401 and 200)', async () => {
    const reseller = await createResellerStore(api(), { webhookSecret: 'whsec_headers' });
    const url = `${service.runtime.apiUrl}/v1/orders/webhook`;
    const body = JSON.stringify(orderPayload([{ vendor: 'Nobody', price: '1.00' }]));
    const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(unsigned.status).toBe(401);
    expectStandardHeaders(unsigned.headers);
    const signed = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: 'whsec_headers',
      body: JSON.parse(body),
    });
    expect(signed.status).toBe(200);
  });
});

describe('unknown routes and methods (the $default route)', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/v1/nothing/here'],
    ['DELETE', '/v1/sync_jobs'],
    ['PUT', '/v1/reseller_stores'],
    ['OPTIONS', '/v1/sync_jobs'],
    ['PROPFIND', '/v1/sync_jobs'],
    ['POST', '/v1/orders/webhook/extra'],
  ])('%s %s answers 404 resource_missing with its Request-Id', async (method, path) => {
    const res = await api().request(method, path);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { type: 'invalid_request_error', code: 'resource_missing', message: expect.any(String) },
      request_id: res.headers.get('request-id'),
    });
    expect(res.headers.get('request-id')).toMatch(REQUEST_ID);
    expectStandardHeaders(res.headers);
  });

  it('answers HEAD with the 404 status and headers, and no body', async () => {
    const res = await fetch(`${service.runtime.apiUrl}/v1/unknown`, { method: 'HEAD' });
    expect(res.status).toBe(404);
    expect(res.headers.get('request-id')).toMatch(REQUEST_ID);
    expect(await res.text()).toBe('');
  });

  it('answers TRACE (which fetch will not send) with the contract 404', async () => {
    const answer = await rawExchange(port(), 'TRACE /v1/sync_jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toMatch(/\r\nrequest-id: req_[0-9a-z]+\r\n/i);
  });

  it('answers CONNECT with the contract 404 instead of resetting the connection', async () => {
    const answer = await rawExchange(port(), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toMatch(/\r\nRequest-Id: req_[0-9a-z]+\r\n/);
    expect(answer).toMatch(/\r\nCache-Control: no-store\r\n/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]).error.code).toBe('resource_missing');
  });

  it('answers a method the parser does not know with a 400 in the contract shape, not a reset', async () => {
    const answer = await rawExchange(port(), 'BREW /v1/sync_jobs HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/);
    const body = JSON.parse(answer.split('\r\n\r\n')[1]);
    expect(body.error.code).toBe('validation_failed');
    expect(body.request_id).toMatch(REQUEST_ID);
  });

  it('keeps serving after all of that', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest({ port: port(), host: '127.0.0.1', method: 'GET', path: '/v1/sync_jobs' }, (res) => {
        expect(res.statusCode).toBe(401);
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  });
});

describe('ids that cannot be ids', () => {
  const LONG = 'x'.repeat(3_000);

  it.each([
    `/v1/sync_jobs/sj_${LONG}`,
    `/v1/sync_jobs/${LONG}/retry`,
    `/v1/reseller_stores/rst_${LONG}`,
    `/v1/reseller_stores/rst_${LONG}/source_stores`,
    `/v1/reseller_stores/rst_${'0'.repeat(24)}/source_stores/sst_${LONG}`,
  ])('a 3,000-character path id answers 404 resource_missing (%#)', async (path) => {
    const method = path.endsWith('/retry') ? 'POST' : 'GET';
    const res = await api().request(method, path);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_missing');
    expect(res.text.length).toBeLessThan(1_000);
  });

  it.each(['/v1/sync_jobs', '/v1/reseller_stores', '/v1/audit_log'])(
    'a 3,000-character starting_after on %s answers 400 invalid_cursor',
    async (path) => {
      const res = await api().get(`${path}?starting_after=${LONG}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
    },
  );
});

describe('markup precision', () => {
  it.each([
    ['productCost', { type: 'field_rules', productCost: 5e-324, shippingCost: 0 }, 'pricingConfig.productCost'],
    ['shippingCost', { type: 'field_rules', productCost: 0, shippingCost: 0.00001 }, 'pricingConfig.shippingCost'],
    ['value', { type: 'percentage', value: 33.333333 }, 'pricingConfig.value'],
  ])('refuses a %s with more than 4 decimal places, naming it, and writes nothing', async (_field, config, param) => {
    const reseller = await createResellerStore(api());
    const res = await api().post(
      `/v1/reseller_stores/${reseller.id}/source_stores`,
      sourceStoreBody({ pricingMode: config.type, pricingConfig: config }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
    const list = await api().get(`/v1/reseller_stores/${reseller.id}/source_stores`);
    expect(list.body.data).toEqual([]);
  });

  it('accepts 4 decimal places (the largest ISO 4217 exponent)', async () => {
    const reseller = await createResellerStore(api());
    const config = { type: 'field_rules', productCost: 0.0001, shippingCost: 12.3456 };
    const res = await api().post(
      `/v1/reseller_stores/${reseller.id}/source_stores`,
      sourceStoreBody({ pricingMode: 'field_rules', pricingConfig: config }),
    );
    expect(res.status).toBe(201);
    expect(res.body.pricingConfig).toEqual(config);
  });
});

describe('webhook deliveries that cannot verify (issue 32)', () => {
  const body = orderPayload([{ vendor: 'Nobody', price: '1.00' }]);
  const callsOf = (name: string) => sdkCalls.filter((call) => call.functionName === name);

  it.each([
    ['a signature that is not a base64 digest', { shopDomain: 'shop.myshopify.com', signature: 'deadbeef' }],
    ['a shop domain no store can have', { shopDomain: 'shop.example.com', secret: 'whsec_any' }],
  ])('%s is a 401 with no DynamoDB or KMS call', async (_, headers) => {
    sdkCalls.length = 0;
    for (const path of ['/v1/orders/webhook', '/v1/fulfillments/webhook'] as const) {
      const res = await sendWebhook(service.runtime.apiUrl, path, { ...headers, body });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_signature');
    }
    expect(callsOf('OrdersWebhook')).toEqual([]);
    expect(callsOf('FulfillmentsWebhook')).toEqual([]);
  });

  it('a flood on a shop domain without a store reads the stores once', async () => {
    sdkCalls.length = 0;
    for (let i = 0; i < 10; i++) {
      const res = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: 'flood.myshopify.com',
        secret: 'whsec_any',
        body,
      });
      expect(res.status).toBe(401);
    }
    // Sequential requests go to the one warm environment, which remembers the domain.
    expect(callsOf('OrdersWebhook').map((call) => call.command)).toEqual(['Query']);
  });
});

describe('a key lookup that fails (issue 32)', () => {
  it('answers 500, not 401, and caches nothing: the next request is served', async () => {
    const fault = service.runtime.faults.inject({
      function: authorizer.name,
      service: 'DynamoDB',
      command: 'GetItem',
      action: 'fail',
      message: 'ProvisionedThroughputExceededException',
    });
    // Fetched directly: the answer is API Gateway's own 500 body, not the contract's (docs/design.md).
    const failed = await fetch(`${service.runtime.apiUrl}/v1/reseller_stores`, {
      headers: { authorization: `Bearer ${TEST_KEYS.owner_a}` },
    });
    expect(fault.hits).toHaveLength(1);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ message: 'Internal Server Error' });

    const served = await api().get('/v1/reseller_stores');
    expect(served.status).toBe(200);
  });
});
