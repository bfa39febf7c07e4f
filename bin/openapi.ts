import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { routes, type RouteSpec } from '../lib/routes.js';
import { SYNC_JOB_STATUSES } from '../shared/domain/sync-job-status.js';

/**
 * The OpenAPI 3.1 document, generated from the route table (lib/routes.ts) and the valibot schemas
 * its routes name, the ones the handlers parse with: `npm run openapi` writes docs/openapi.json.
 */

/** What each route reads, by operation id: the schemas its entry in lib/routes.ts names. */
export const requests: Record<string, NonNullable<RouteSpec['request']>> = Object.fromEntries(
  routes.map((route) => [route.name, route.request ?? {}]),
);

const str = { type: 'string' };
const nullableStr = { type: ['string', 'null'] };
const timestamp = { type: 'string', format: 'date-time' };
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' };
const object = (name: string, properties: Record<string, unknown>) => ({
  type: 'object',
  required: Object.keys(properties),
  properties: { id: str, object: { const: name }, ...properties, request_id: str },
});

const components = {
  reseller_store: object('reseller_store', {
    ownerId: str,
    name: str,
    platform: str,
    shopDomain: str,
    createdAt: timestamp,
    deletedAt: nullableTimestamp,
  }),
  source_store: object('source_store', {
    resellerStoreId: str,
    name: str,
    platform: str,
    shopDomain: str,
    vendorTag: str,
    pricingMode: { enum: ['percentage', 'field_rules'] },
    pricingConfig: { type: 'object' },
    createdAt: timestamp,
    deletedAt: nullableTimestamp,
  }),
  sync_job: object('sync_job', {
    resellerStoreId: str,
    sourceStoreId: str,
    status: { enum: SYNC_JOB_STATUSES },
    attempts: { type: 'integer' },
    externalOrderId: str,
    sourceOrderId: nullableStr,
    errorMessage: nullableStr,
    completedAt: nullableTimestamp,
    failedAt: nullableTimestamp,
    deadAt: nullableTimestamp,
    createdAt: timestamp,
    updatedAt: timestamp,
    fulfillment: {
      type: ['object', 'null'],
      description: 'the latest source fulfillment and where its tracking stands (docs/reverse-sync.md)',
    },
    fulfillments: {
      type: 'array',
      items: { type: 'object' },
      description: 'every source fulfillment of the order, oldest first',
    },
  }),
  audit_log_entry: object('audit_log_entry', {
    action: { enum: ['sync_job.retried', 'sync_job.dead'] },
    resellerStoreId: str,
    resourceType: { const: 'sync_job' },
    resourceId: str,
    actorId: str,
    actor: { type: 'object', properties: { type: { enum: ['api_key', 'system'] }, id: str } },
    metadata: { type: 'object' },
    createdAt: timestamp,
  }),
  webhook_receipt: {
    type: 'object',
    properties: { object: { const: 'webhook_receipt' }, syncJobIds: { type: 'array', items: str }, request_id: str },
  },
  error: {
    type: 'object',
    required: ['error', 'request_id'],
    properties: {
      error: {
        type: 'object',
        required: ['type', 'code', 'message'],
        properties: {
          type: { enum: ['invalid_request_error', 'authentication_error', 'api_error'] },
          code: str,
          message: str,
          param: str,
        },
      },
      request_id: str,
    },
  },
};

const ref = (name: keyof typeof components) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const listOf = (name: keyof typeof components) => ({
  type: 'object',
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: ref(name) },
    has_more: { type: 'boolean' },
    url: str,
    request_id: str,
  },
});

const resultOf = (route: RouteSpec): Record<string, unknown> => {
  const resource = (
    {
      reseller_stores: 'reseller_store',
      source_stores: 'source_store',
      sync_jobs: 'sync_job',
      audit_log: 'audit_log_entry',
    } as const
  )[
    route.path
      .split('/')
      .filter((part) => part && !part.startsWith('{'))
      .at(-1) as string
  ];
  if (route.auth === 'webhook') return { 200: { description: 'accepted', ...json(ref('webhook_receipt')) } };
  if (route.method === 'DELETE') return { 204: { description: 'deleted (soft)' } };
  if (route.name.startsWith('List')) return { 200: { description: 'a page', ...json(listOf(resource ?? 'sync_job')) } };
  if (route.name === 'RetrySyncJob')
    return { 200: { description: 'the job, pending again', ...json(ref('sync_job')) } };
  return { [route.method === 'POST' ? 201 : 200]: { description: 'the object', ...json(ref(resource ?? 'sync_job')) } };
};

const queryParameters = (schema: v.GenericSchema) => {
  const properties =
    (toJsonSchema(schema, { errorMode: 'ignore' }) as { properties?: Record<string, unknown> }).properties ?? {};
  return Object.entries(properties).map(([name, value]) => ({ name, in: 'query', required: false, schema: value }));
};

export const buildOpenApi = () => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const request = route.request ?? {};
    const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: str,
    }));
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = {
      operationId: route.name,
      security: route.auth === 'apiKey' ? [{ bearer: [] }] : [],
      ...(route.auth === 'webhook'
        ? {
            description:
              'Platform webhook: `X-Platform-Hmac-SHA256` (base64 HMAC-SHA256 of the raw body) ' +
              'and `X-Platform-Shop-Domain`.',
          }
        : {}),
      parameters: [...pathParameters, ...(request.query ? queryParameters(request.query) : [])],
      ...(request.body
        ? { requestBody: { required: true, ...json(toJsonSchema(request.body, { errorMode: 'ignore' })) } }
        : {}),
      responses: { ...resultOf(route), default: { description: 'an error (CONTRACT.md §3)', ...json(ref('error')) } },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Reseller order routing', version: '1' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: components },
    paths,
  };
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync('docs/openapi.json', `${JSON.stringify(buildOpenApi(), null, 2)}\n`);
  console.log('wrote docs/openapi.json');
}
