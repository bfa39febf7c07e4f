import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Document, type RulesetDefinition, Spectral } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import * as v from 'valibot';
import { buildOpenApi, requests, webhookTopics } from '../../bin/openapi.js';
import { routes } from '../../lib/routes.js';
import { appTopicNames } from '../../shared/app-webhooks/topics.js';
import { EVENT_TYPES } from '../../shared/entities/event.js';
import { CreateResellerStoreBody, CreateSourceStoreBody } from '../../shared/http/schemas.js';
import { inlineSchemas, responseChecker, schemaCompiler } from '../openapi-conformance.js';

const doc = buildOpenApi() as Record<string, any>;
const json = JSON.stringify(doc);

describe('OpenAPI document', () => {
  it('documents every route of the route table', () => {
    for (const route of routes)
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]).toMatchObject({ operationId: route.name });
  });

  it('gives every route that reads a body or a query its schema', () => {
    for (const route of routes.filter((r) => r.auth === 'apiKey')) {
      if ((route.method === 'POST' && !/\/(retry|release)$/.test(route.path)) || route.method === 'PATCH')
        expect(requests[route.name]?.body).toBeDefined();
      if (route.name.startsWith('List')) expect(requests[route.name]?.query).toBeDefined();
    }
  });

  it('is what docs/openapi.json holds (run `npm run openapi` after changing a route or a schema)', () => {
    expect(JSON.parse(readFileSync('docs/openapi.json', 'utf8'))).toEqual(JSON.parse(json));
  });

  it('has its typed client in step: client/schema.d.ts is what openapi-typescript makes of it', () => {
    // A child process: openapi-typescript's dependencies are ESM that jest's CommonJS cannot load.
    const run = spawnSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'bin/openapi.ts', '--check'], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 30_000);

  it('passes Redocly’s recommended rules, as integrators’ linters read it', () => {
    // The CLI in a child process, on this Node: its dependencies are ESM that jest's CommonJS cannot load.
    const run = spawnSync(
      process.execPath,
      [
        'node_modules/@redocly/cli/bin/cli.js',
        'lint',
        '--extends',
        'recommended',
        '--format',
        'json',
        'docs/openapi.json',
      ],
      {
        encoding: 'utf8',
        // No telemetry and no update check: the tests run offline.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    const report = JSON.parse(run.stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(run.status).toBe(0);
  }, 30_000);

  it('passes Spectral’s spectral:oas ruleset with no error and no warning', async () => {
    // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
    const SEVERITY = ['error', 'warning', 'information', 'hint'];
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as RulesetDefinition, 'recommended']] });
    const lint = (text: string) => spectral.run(new Document(text, Json, 'docs/openapi.json'));
    const found = (await lint(readFileSync('docs/openapi.json', 'utf8'))).map((result) => ({
      code: result.code,
      severity: SEVERITY[result.severity],
      message: result.message,
      path: result.path.join('.'),
    }));
    expect(found).toEqual([]);
    // The ruleset does see: issue 39's `prefixItems` form of `["*"]` was 3 errors of `array-items`.
    const broken = structuredClone(doc);
    broken.components.schemas.webhook_endpoint.properties.enabledEvents = {
      type: 'array',
      prefixItems: [{ const: '*' }],
      items: false,
    };
    const errors = (await lint(JSON.stringify(broken))).filter((r) => r.severity === 0);
    expect(errors.map((r) => r.code)).toContain('array-items');
  }, 30_000);

  it('writes every array with an `items` schema, as Spectral’s spectral:oas rule array-items wants', () => {
    // Spectral's rule `array-items` (a schema of `type: array` has an object `items`), re-stated over
    // every schema the document holds, with a path to each offender.
    const offending: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${path}[${i}]`);
        return;
      }
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      const types = [schema.type].flat();
      if (types.includes('array') && (typeof schema.items !== 'object' || schema.items === null)) offending.push(path);
      for (const [key, value] of Object.entries(schema)) walk(value, `${path}.${key}`);
    };
    walk(doc, '$');
    expect(offending).toEqual([]);
    expect(json).not.toContain('"prefixItems"');
  });

  it('still takes `["*"]` and nothing else of its kind for enabledEvents, as the API does', () => {
    const schema = doc.components.schemas.webhook_endpoint.properties.enabledEvents;
    const check = (value: unknown) => schemaCompiler(doc)(schema)(value);
    expect(check(['*'])).toBe(true);
    expect(check(['sync_job.dead'])).toBe(true);
    expect(check(['*', '*'])).toBe(false);
    expect(check(['*', 'sync_job.dead'])).toBe(false);
    expect(check([])).toBe(false);
  });

  it('gives every operation a summary, a description and a tag, and each webhook its own operationId', () => {
    const operations = [
      ...Object.values(doc.paths).flatMap((methods: any) => Object.values(methods)),
      ...Object.values(doc.webhooks).map((entry: any) => entry.post),
    ] as any[];
    for (const operation of operations) {
      expect(operation.summary).toEqual(expect.any(String));
      expect(operation.description).toEqual(expect.any(String));
      expect(operation.tags).toHaveLength(1);
      expect(doc.tags.map((t: any) => t.name)).toContain(operation.tags[0]);
    }
    const ids = operations.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.info).toMatchObject({ license: { name: expect.any(String) }, contact: { name: expect.any(String) } });
  });

  it('is accepted by an OpenAPI 3.1 validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(json));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds JSON Schema 2020-12 only: every schema compiles in strict mode, no draft-07 leftovers', () => {
    expect(json).not.toMatch(/"\$schema"|"definitions"|"nullable"|draft-07/);
    const compile = schemaCompiler(doc);
    const failures: string[] = [];
    const schemas = [
      ...Object.entries(doc.components.schemas).map(([name, schema]) => ({ where: name, schema })),
      ...inlineSchemas(doc),
    ];
    expect(schemas.length).toBeGreaterThan(50);
    for (const { where, schema } of schemas) {
      try {
        compile(schema);
      } catch (error) {
        failures.push(`${where}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('keeps the shop-domain rule: what the handlers accept, and nothing they refuse', () => {
    const validate = schemaCompiler(doc)(doc.components.schemas.shop_domain);
    for (const domain of ['acme.myshopify.com', 'ACME-2.MyShopify.com', `${'a'.repeat(63)}.myshopify.com`]) {
      expect(validate(domain)).toBe(true);
      expect(v.safeParse(CreateResellerStoreBody.pipe[0].entries.shopDomain, domain).success).toBe(true);
    }
    for (const domain of [
      '-acme.myshopify.com',
      'acme.example.com',
      'a.b.myshopify.com',
      `${'a'.repeat(64)}.myshopify.com`,
    ]) {
      expect(validate(domain)).toBe(false);
      expect(v.safeParse(CreateResellerStoreBody.pipe[0].entries.shopDomain, domain).success).toBe(false);
    }
  });

  it('states pricingConfig per mode, for requests and responses', () => {
    const body = doc.paths['/v1/reseller_stores/{rst_id}/source_stores'].post.requestBody.content['application/json'];
    const compile = schemaCompiler(doc);
    const validBody = {
      name: 'S',
      platform: 'custom',
      shopDomain: 's.myshopify.com',
      accessToken: 't',
      webhookSecret: 'w',
      vendorTag: 'V',
      pricingMode: 'field_rules',
      pricingConfig: { type: 'field_rules', productCost: 3, shippingCost: 2 },
    };
    expect(v.safeParse(CreateSourceStoreBody, validBody).success).toBe(true);
    expect(compile(body.schema)(validBody)).toBe(true);
    expect(compile(body.schema)({ ...validBody, pricingConfig: { type: 'field_rules', value: 3 } })).toBe(false);
    // pricingConfig.type must equal pricingMode: the service refuses it, and so does the document.
    const mismatched = { ...validBody, pricingMode: 'percentage' };
    expect(v.safeParse(CreateSourceStoreBody, mismatched).success).toBe(false);
    expect(compile(body.schema)(mismatched)).toBe(false);

    const store = {
      ...validBody,
      id: 'sst_1',
      object: 'source_store',
      resellerStoreId: 'rst_1',
      connection: { state: 'connected', since: null, reason: null },
      tokenExpiresAt: '2027-01-01T00:00:00.000Z',
      serviceLevel: null,
      apiVersion: { requested: '2026-10', served: '2026-10', deprecations: [], checkedAt: '2026-11-21T04:02:45.123Z' },
      webhooks: {
        status: 'repaired',
        checkedAt: '2026-11-21T04:02:45.123Z',
        missing: ['orders/cancelled'],
        error: null,
      },
      createdAt: '2026-11-21T04:02:45.123Z',
      deletedAt: null,
      request_id: 'req_1',
    };
    for (const secret of ['accessToken', 'webhookSecret']) delete (store as Record<string, unknown>)[secret];
    const response = compile(doc.components.schemas.source_store);
    expect(response(store)).toBe(true);
    expect(response({ ...store, pricingMode: 'percentage' })).toBe(false);
  });

  it('has every platform webhook topic in `webhooks`, with their headers', () => {
    // The app webhook's topics are its table's (shared/app-webhooks/topics.ts), `app/uninstalled` among them.
    expect(appTopicNames()).toContain('app/uninstalled');
    expect(
      Object.keys(doc.webhooks)
        .filter((name) => name.includes('/'))
        .sort(),
    ).toEqual(
      [
        'fulfillments/create',
        'fulfillments/update',
        'fulfillment_events/create',
        'orders/cancelled',
        'orders/create',
        'orders/updated',
        ...appTopicNames(),
      ].sort(),
    );
    for (const [route, topic] of routes
      .filter((r) => r.auth === 'webhook')
      .flatMap((r) => webhookTopics[r.name].topics.map((t) => [r, t] as const))) {
      expect(route.path).toMatch(/webhook$/);
      const delivery = doc.webhooks[topic].post;
      const names = delivery.parameters.map((p: any) => p.name ?? p.$ref.split('/').at(-1));
      expect(names).toEqual([
        'X-Platform-Hmac-SHA256',
        'X-Platform-Shop-Domain',
        'X-Platform-Topic',
        'X-Platform-Webhook-Id',
        'X-Shopify-Hmac-Sha256',
        'X-Shopify-Shop-Domain',
        'X-Shopify-Topic',
        'X-Shopify-Webhook-Id',
      ]);
      expect(delivery.security).toEqual([]);
      // An order's or a parcel's topic names it by `id`; an app topic is about the shop (Shopify's shapes).
      if (route.name !== 'AppWebhook')
        expect(delivery.requestBody.content['application/json'].schema.required).toEqual(
          expect.arrayContaining(['id']),
        );
    }
  });

  it('has every event type in `webhooks`: the signed POST an endpoint receives, its body the event', () => {
    expect(Object.keys(doc.webhooks).filter((name) => !name.includes('/'))).toEqual([...EVENT_TYPES]);
    expect(doc.components.schemas.event_type.enum).toEqual([...EVENT_TYPES]);
    for (const type of EVENT_TYPES) {
      const delivery = doc.webhooks[type].post;
      expect(delivery.parameters.map((p: any) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      expect(delivery.security).toEqual([]);
      const body = schemaCompiler(doc)(delivery.requestBody.content['application/json'].schema);
      const event = { id: 'evt_1', object: 'event', type, created: '2026-11-27T10:00:00.000Z', data: { object: {} } };
      expect(body(event)).toBe(true);
      expect(body({ ...event, type: type === 'sync_job.dead' ? 'sync_job.completed' : 'sync_job.dead' })).toBe(false);
    }
  });

  it('gives every response its Request-Id, and every POST and PATCH Idempotency-Key', () => {
    for (const route of routes) {
      const operation = doc.paths[route.path][route.method.toLowerCase()];
      for (const response of Object.values(operation.responses) as any[])
        expect(response.headers['Request-Id']).toEqual({ $ref: '#/components/headers/Request-Id' });
      const idempotent = route.auth === 'apiKey' && ['POST', 'PATCH'].includes(route.method);
      const parameters = JSON.stringify(operation.parameters);
      expect([route.name, parameters.includes('Idempotency-Key')]).toEqual([route.name, idempotent]);
      if (idempotent) {
        expect(operation.responses['400'].description).toContain('idempotency_key_reused');
        expect(operation.responses['409'].description).toContain('idempotency_key_in_progress');
      }
    }
    expect(doc.servers.map((s: any) => s.url)).toContain('http://127.0.0.1:3000');
  });

  it('lets the response checker tell a documented response from one that is not', () => {
    const check = responseChecker(doc);
    const headers = new Headers({ 'Request-Id': 'req_abc' });
    const error = {
      error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such sync job' },
      request_id: 'req_abc',
    };
    expect(check({ method: 'GET', path: '/v1/sync_jobs/sj_1', status: 404, headers, body: error })).toEqual([]);
    expect(check({ method: 'GET', path: '/v1/nowhere', status: 404, headers, body: error })).toEqual([]);
    expect(check({ method: 'GET', path: '/v1/sync_jobs/sj_1', status: 200, headers, body: { id: 'sj_1' } })).toEqual([
      expect.stringContaining("must have required property 'object'"),
    ]);
    expect(
      check({
        method: 'DELETE',
        path: '/v1/reseller_stores/rst_1',
        status: 204,
        headers: new Headers(),
        body: undefined,
      }),
    ).toEqual([expect.stringContaining('no Request-Id')]);
    expect(check({ method: 'GET', path: '/v1/sync_jobs?limit=2', status: 418, headers, body: error })).toEqual([
      expect.stringContaining('status not documented'),
    ]);
  });
});
