import { readFileSync } from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Checks real responses against docs/openapi.json: the integration tests' client runs every
 * response it receives through `checkResponse`, so a shape the document gets wrong fails a test.
 * The schemas are compiled by Ajv's JSON Schema 2020-12 class in strict mode, which also proves
 * the document's schemas are 2020-12 (an unknown keyword such as draft-04's `nullable` fails).
 */

type Json = Record<string, any>;

const SCHEMA_BASE = 'https://openapi.local/schemas/';

/** `#/components/schemas/x` → an absolute id Ajv can resolve across separately added schemas. */
const absoluteRefs = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) =>
      key === '$ref' && typeof value === 'string'
        ? [key, value.replace('#/components/schemas/', SCHEMA_BASE)]
        : [key, absoluteRefs(value)],
    ),
  );
};

export const loadDocument = (file = 'docs/openapi.json'): Json => JSON.parse(readFileSync(file, 'utf8'));

/** A strict 2020-12 Ajv holding every component schema of `document`. */
export const schemaCompiler = (document: Json) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // OpenAPI's own format names (an annotation: any string is valid).
  ajv.addFormat('password', true);
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {}))
    ajv.addSchema(absoluteRefs(schema) as object, `${SCHEMA_BASE}${name}`);
  const cache = new Map<unknown, ValidateFunction>();
  return (schema: unknown) => {
    let validate = cache.get(schema);
    if (!validate) {
      validate = ajv.compile(absoluteRefs(schema) as object);
      cache.set(schema, validate);
    }
    return validate;
  };
};

/** Every Schema Object of the document outside components.schemas: parameters, bodies, headers. */
export const inlineSchemas = (document: Json) => {
  const found: { where: string; schema: unknown }[] = [];
  const visit = (node: unknown, where: string) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) visit(item, `${where}/${i}`);
    } else if (node && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) {
        if (key === 'schema') found.push({ where: `${where}/schema`, schema: value });
        else visit(value, `${where}/${key}`);
      }
  };
  const { schemas: _, ...rest } = document.components ?? {};
  visit({ paths: document.paths, webhooks: document.webhooks, components: rest }, '#');
  return found;
};

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Json;
}

const operationsOf = (document: Json): Operation[] =>
  Object.entries(document.paths as Json).flatMap(([template, item]) =>
    Object.entries(item as Json).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
      operation: operation as Json,
    })),
  );

const resolve = (document: Json, node: Json): Json => {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((at: Json, part: string) => at[part], document);
};

export interface ObservedResponse {
  method: string;
  /** The path as sent, query string included. */
  path: string;
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
}

/**
 * Answers what in a response disagrees with the document (empty when nothing does). A path no
 * route serves is held to the error shape only.
 */
export const responseChecker = (document: Json = loadDocument()) => {
  const compile = schemaCompiler(document);
  const operations = operationsOf(document);
  const errorSchema = { $ref: '#/components/schemas/error' };
  return (response: ObservedResponse): string[] => {
    const path = response.path.split('?')[0];
    const found = operations.find((op) => op.method === response.method && op.pattern.test(path));
    const where = `${response.method} ${found?.template ?? path} → ${response.status}`;
    const problems: string[] = [];
    const requestId = response.headers.get('request-id');
    if (!found) {
      if (!requestId) problems.push(`${where}: no Request-Id header`);
      if (response.status < 400) problems.push(`${where}: a route the document does not list`);
      else if (!compile(errorSchema)(response.body)) problems.push(`${where}: not the error shape`);
      return problems;
    }
    const declared = found.operation.responses?.[String(response.status)] ?? found.operation.responses?.default;
    if (!declared) return [...problems, `${where}: status not documented`];
    const spec = resolve(document, declared);
    for (const name of Object.keys(spec.headers ?? {}))
      if (resolve(document, spec.headers[name]).required && !response.headers.has(name))
        problems.push(`${where}: no ${name} header`);
    if (response.headers.has('idempotent-replayed') && !spec.headers?.['Idempotent-Replayed'])
      problems.push(`${where}: Idempotent-Replayed is not documented here`);
    const schema = spec.content?.['application/json']?.schema;
    if (!schema) {
      if (response.body !== undefined) problems.push(`${where}: a body where the document has none`);
      return problems;
    }
    const validate = compile(schema);
    if (!validate(response.body))
      return [
        ...problems,
        `${where}: ${validate.errors?.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`,
      ];
    const bodyId = (response.body as Json).request_id;
    if (requestId && bodyId !== requestId) problems.push(`${where}: body request_id ${bodyId} ≠ header ${requestId}`);
    return problems;
  };
};
