/**
 * Shopify's Admin GraphQL schema, as Shopify publishes it: the introspection that the npm package
 * `@shopify/dev-mcp` ships (a dev dependency), never a copy of ours. The simulator executes it and
 * the tests validate every document the storeplatform_b adapter sends against it. Built once per
 * process (about 0.2 s); never imported by a function, so no bundle carries it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { buildClientSchema, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { SHOPIFY_API_VERSION } from '../../shared/platforms/http.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where the package keeps the introspection of this API version. */
export const shopifySchemaFile = () =>
  `${ROOT}node_modules/@shopify/dev-mcp/dist/data/admin_${SHOPIFY_API_VERSION}.json.gz`;

let schema: GraphQLSchema | undefined;

export const shopifyAdminSchema = (): GraphQLSchema => {
  if (!schema) {
    const introspection = JSON.parse(gunzipSync(readFileSync(shopifySchemaFile())).toString('utf8')) as {
      data: IntrospectionQuery;
    };
    schema = buildClientSchema(introspection.data);
  }
  return schema;
};
