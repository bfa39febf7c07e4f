import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

/**
 * The typed API client: openapi-fetch over the types openapi-typescript generates from
 * docs/openapi.json (`npm run openapi` keeps client/schema.d.ts in step). Paths, parameters,
 * bodies and responses are checked by the compiler; nothing here is bundled into a Lambda.
 *
 *   const api = createApiClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.API_KEY });
 *   const { data, error } = await api.GET('/v1/sync_jobs/{id}', { params: { path: { id } } });
 */

export type ApiClient = Client<paths>;
export type Schemas = components['schemas'];
export type ErrorBody = Schemas['error'];

export interface ApiClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** `http://127.0.0.1:3000` locally, the stack's `ApiUrl` output when deployed. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit it for the webhooks or to test a missing key. */
  apiKey?: string;
}

/** The request never got an answer: the API is down, or the URL is wrong. */
export class ApiUnreachableError extends Error {
  constructor(
    readonly origin: string,
    cause: unknown,
  ) {
    // fetch's TypeError('fetch failed') carries the socket's error (ECONNREFUSED, ENOTFOUND…) as its cause.
    const socket = (cause as { cause?: { code?: string; message?: string } })?.cause;
    const reason = socket?.code ?? socket?.message ?? (cause as Error)?.message ?? 'no answer';
    super(`cannot reach ${origin} (${reason})`, { cause });
    this.name = 'ApiUnreachableError';
  }
}

export const createApiClient = ({ baseUrl, apiKey, headers, ...options }: ApiClientOptions): ApiClient => {
  const client = createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), ...(headers as object) },
    ...options,
  });
  client.use({ onError: ({ error, request }) => new ApiUnreachableError(new URL(request.url).origin, error) });
  return client;
};

/** An error answer of the API (CONTRACT.md §3), with its code, message and request id. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }

  /** One line, for a terminal: `resource_missing (404): No such sync job: 'sj_x'. [req_…]`. */
  override toString() {
    return `${this.code} (${this.status}): ${this.message}${this.requestId ? ` [${this.requestId}]` : ''}`;
  }
}

/** The body of a successful answer, or an `ApiRequestError` for any other. */
export const unwrap = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
  const { response } = result;
  if (response.ok) return result.data as T;
  const body = (result.error ?? {}) as Partial<ErrorBody>;
  throw new ApiRequestError(
    response.status,
    body.error?.code ?? `http_${response.status}`,
    body.error?.message ?? (response.statusText || 'the API answered without an error body'),
    response.headers.get('request-id'),
    body.error?.param,
  );
};

/**
 * The `Idempotency-Key` of the retry of a dead job by `npm run jobs -- retry --all-dead` and by the
 * operator console's bulk retry: one key per death of a job (its `deadAt`), so both, or one run
 * twice, retry a job once; the job dead again later is a new death and a new key.
 */
export const deadJobRetryKey = (job: { id: string; deadAt: string | null }) =>
  `retry-dead-${job.id}-${job.deadAt ?? 'unknown'}`;

/**
 * How long a `429` answer asks to wait, in ms: its `Retry-After`, seconds or an HTTP date (a second
 * when it has none, as API Gateway's own throttle answers); undefined for any other answer.
 */
export const retryAfterMs = (response: Response, now = Date.now()): number | undefined => {
  if (response.status !== 429) return undefined;
  const header = response.headers.get('retry-after')?.trim() ?? '';
  if (/^\d+$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
};

export interface RateLimitWaits {
  /** Called before each wait, with its length in ms (for a progress line). */
  onWait?: (ms: number) => void;
  /** How to wait; setTimeout by default (tests pass their own clock). */
  sleep?: (ms: number) => Promise<void>;
  /** Waits at most for one request; then its last 429 is the answer. Default 30. */
  maxWaits?: number;
}

/**
 * Sends a change, and sends it again each time it is answered `429` (`rate_limited`, the key's changes
 * of this second used up: CONTRACT.md §3) once its `Retry-After` has passed. A 429 is answered before
 * the API reads or changes anything (shared/http/handler.ts), so the same request, with the same
 * `Idempotency-Key`, is safe to send again. The bulk retries of `npm run jobs` and the console use it.
 */
export const waitingOutRateLimits = async <R extends { response: Response }>(
  send: () => Promise<R>,
  { onWait, sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)), maxWaits = 30 }: RateLimitWaits = {},
): Promise<R> => {
  for (let waits = 0; ; waits++) {
    const result = await send();
    const wait = retryAfterMs(result.response);
    if (wait === undefined || waits >= maxWaits) return result;
    onWait?.(wait);
    await sleep(wait);
  }
};
