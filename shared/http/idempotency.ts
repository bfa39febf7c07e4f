import type { SecretCipher, SecretContext } from '../aws/kms-cipher.js';
import { ApiError, IdempotencyKeyInProgressError, IdempotencyKeyReusedError, ValidationError } from '../core/errors.js';
import { logger } from '../core/telemetry.js';
import {
  claimKey,
  type KeptResponse,
  type KeyScope,
  keepResponse,
  releaseKey,
  requestFingerprint,
} from '../idempotency/requests.js';
import {
  errorBody,
  type HttpMiddleware,
  type HttpResponse,
  type HttpResult,
  readHeader,
  serializeResult,
} from './handler.js';

/** The methods CONTRACT.md §9 makes idempotent; a key sent with any other is ignored, as Stripe ignores it. */
const IDEMPOTENT_METHODS = new Set(['POST', 'PATCH']);
const KEY = /^[\x20-\x7e]{1,255}$/;

export interface IdempotencyOptions {
  /**
   * For routes whose answer carries a secret shown once (a webhook endpoint's `secret`, on create and
   * rotate_secret): the kept answer holds it encrypted with this cipher, under its endpoint's
   * context (the answer's `id`), and a replay decrypts it. Without it, a secret would lie in plain
   * text in the table for the record's 24 hours.
   */
  sealSecrets?: SecretCipher;
}

/** The field of an answer that carries a secret, and the context its ciphertext is bound to. */
const SECRET_FIELD = 'secret';
const secretContext = (body: Record<string, unknown>): SecretContext => ({
  storeId: String(body.id),
  field: 'endpointSecret',
});

const sealed = async (response: KeptResponse, cipher: SecretCipher | undefined): Promise<KeptResponse> => {
  const secret = response.body?.[SECRET_FIELD];
  if (!cipher || !response.body || typeof secret !== 'string') return response;
  const ciphertext = await cipher.encrypt(secret, secretContext(response.body));
  return { ...response, body: { ...response.body, [SECRET_FIELD]: ciphertext }, sealed: [SECRET_FIELD] };
};

const unsealed = async (response: KeptResponse, cipher: SecretCipher | undefined): Promise<KeptResponse> => {
  const { body } = response;
  if (!response.sealed?.includes(SECRET_FIELD) || !body) return response;
  if (!cipher) throw new Error('a kept answer holds a sealed secret and this route has no cipher');
  const secret = await cipher.decrypt(String(body[SECRET_FIELD]), secretContext(body));
  return { status: response.status, body: { ...body, [SECRET_FIELD]: secret } };
};

/**
 * What a failed request leaves for its replays: a domain refusal (404, 409, 400 not retryable) is
 * an answer and is kept; a 5xx may succeed if sent again, and a `validation_failed` ran nothing,
 * so neither is kept.
 */
const keptError = (error: unknown): KeptResponse | undefined =>
  error instanceof ApiError && error.status < 500 && !(error instanceof ValidationError)
    ? { status: error.status, body: errorBody(error) }
    : undefined;

/**
 * `Idempotency-Key` on POST and PATCH (CONTRACT.md §9), after authentication and body parsing (an
 * unauthenticated or unparseable request runs nothing, so it claims nothing). The first request
 * with a key claims it and runs; its answer is kept 24 hours and replayed, with the first request's
 * id and `Idempotent-Replayed: true`, to every later request with the same key, method, path and
 * body. The same key with another request is `idempotency_key_reused`; while the first still runs,
 * `idempotency_key_in_progress`.
 */
export const idempotencyMiddleware = (options: IdempotencyOptions = {}): HttpMiddleware => ({
  before: async function claimIdempotencyKey(request) {
    const { event, context } = request;
    const method = event.requestContext.http.method;
    const key = readHeader(event, 'idempotency-key');
    if (key === undefined || !IDEMPOTENT_METHODS.has(method)) return;
    if (!KEY.test(key)) {
      throw new ValidationError('Idempotency-Key must be 1 to 255 printable ASCII characters.', 'Idempotency-Key');
    }
    const scope: KeyScope = { ownerId: context.state.ownerId!, key };
    const fingerprint = requestFingerprint(method, event.rawPath, context.state.rawBody);
    const claim = await claimKey(scope, {
      fingerprint,
      requestId: context.state.requestId,
      lockedUntil: Date.now() + context.getRemainingTimeInMillis(),
    });
    if (claim.claimed) {
      context.state.idempotencyKey = scope;
      return;
    }
    const { existing } = claim;
    if (existing.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
    if (existing.state === 'in_progress') throw new IdempotencyKeyInProgressError();
    logger.info('idempotent request replayed', { replayed_request_id: existing.requestId });
    // Returning ends the request here: the kept answer as it was first sent, its request id included.
    const { status, body } = await unsealed(existing.response, options.sealSecrets);
    return serializeResult(
      { status, body, headers: { 'Idempotent-Replayed': 'true' } },
      existing.requestId,
    ) as HttpResponse;
  },

  after: async function keepAnswer(request) {
    const scope = request.context.state.idempotencyKey;
    if (!scope) return;
    const { status, body } = request.response as HttpResult;
    // Serialization adds request ids to the body afterwards: what is kept is a copy of the answer.
    await keep(scope, request.context.state.requestId, { status, body: body && structuredClone(body) }, options);
  },

  onError: async function keepOrRelease(request) {
    const scope = request.context.state?.idempotencyKey;
    if (!scope) return;
    const { requestId } = request.context.state;
    const kept = keptError(request.error);
    if (kept) return void (await keep(scope, requestId, kept));
    try {
      await releaseKey(scope, requestId);
    } catch (error) {
      // The claim lapses by itself at the function's deadline; until then a retry answers 409.
      logger.error('could not release an idempotency key', { error: (error as Error).name });
    }
  },
});

/** The request has run: whatever happens to the record, its answer goes out. */
const keep = async (scope: KeyScope, requestId: string, response: KeptResponse, options: IdempotencyOptions = {}) => {
  try {
    if (!(await keepResponse(scope, requestId, await sealed(response, options.sealSecrets))))
      logger.warn('idempotency key lapsed before its answer was kept', { status: response.status });
  } catch (error) {
    logger.error('could not keep an idempotent answer', { status: response.status, error: (error as Error).name });
  }
};
