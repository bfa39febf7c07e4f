import { createApiClient } from '../../client/client.js';
import { responseChecker } from '../openapi-conformance.js';
import type { ApiClient, RequestOptions } from './support.js';

/**
 * The integration tests' `ApiClient` on the typed client (client/client.ts, openapi-fetch over the
 * types generated from docs/openapi.json). Tests address the API by concrete path (`/v1/sync_jobs/
 * sj_…?limit=2`), bad bodies and odd headers included, so requests go through the client's untyped
 * `request`; every answer is then held to the document (test/openapi-conformance.ts), and a test
 * fails when the service answers something the document does not say.
 */

const checkResponse = responseChecker();

/** `client.request` without the compile-time path check: the tests also call paths no route serves. */
type UntypedRequest = (
  method: string,
  path: string,
  init: Record<string, unknown>,
) => Promise<{ response: Response; error?: unknown }>;

export const apiClient = (baseUrl: string, authorization: string | undefined): ApiClient => {
  const typed = createApiClient({ baseUrl, headers: authorization ? { Authorization: authorization } : {} });
  const send = typed.request as unknown as UntypedRequest;

  const request = async (method: string, path: string, body?: unknown, options: RequestOptions = {}) => {
    const raw = options.rawBody !== undefined;
    let text = '';
    const { response } = await send(method.toLowerCase(), path, {
      body: raw ? options.rawBody : body,
      // A raw body goes as it is, with no content type unless the test sets one.
      ...(raw ? { bodySerializer: (value: unknown) => value } : {}),
      headers: { ...(raw ? { 'Content-Type': null } : {}), ...options.headers },
      parseAs: 'text',
      middleware: [
        {
          onResponse: async ({ response: answer }: { response: Response }) => {
            text = await answer.clone().text();
          },
        },
      ],
    });
    let parsed: unknown;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    const problems = checkResponse({ method, path, status: response.status, headers: response.headers, body: parsed });
    if (problems.length) throw new Error(`the answer disagrees with docs/openapi.json: ${problems.join('; ')}`);
    return { status: response.status, headers: response.headers, body: parsed as any, text };
  };

  return {
    request,
    get: (path, options) => request('GET', path, undefined, options),
    post: (path, body, options) => request('POST', path, body, options),
    patch: (path, body, options) => request('PATCH', path, body, options),
    delete: (path, options) => request('DELETE', path, undefined, options),
  };
};
