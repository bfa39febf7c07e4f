import { readFileSync } from 'node:fs';
import { buildOpenApi, requests } from '../../bin/openapi.js';
import { routes } from '../../lib/routes.js';

describe('OpenAPI document', () => {
  const doc = buildOpenApi();

  it('documents every route of the route table', () => {
    for (const route of routes)
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]).toMatchObject({ operationId: route.name });
  });

  it('gives every route that reads a body or a query its schema', () => {
    for (const route of routes.filter((r) => r.auth === 'apiKey')) {
      if ((route.method === 'POST' && !route.path.endsWith('/retry')) || route.method === 'PATCH')
        expect(requests[route.name]?.body).toBeDefined();
      if (route.name.startsWith('List')) expect(requests[route.name]?.query).toBeDefined();
    }
  });

  it('is what docs/openapi.json holds (run `npm run openapi` after changing a route or a schema)', () => {
    expect(JSON.parse(readFileSync('docs/openapi.json', 'utf8'))).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});
