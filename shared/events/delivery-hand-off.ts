import { SignatureV4 } from '@smithy/signature-v4';
import { sqs } from '../aws/batch.js';
import type { DeliveryMessage } from './delivery-queue.js';

/**
 * The hand-off of a try that could hang (shared/events/README.md, "Integrators isolated"): the delivery
 * worker invokes `EventDeliverySlowTry` asynchronously (InvocationType `Event`: Lambda's own queue,
 * no idle cost) with the try's message, ids only as on the delivery queue, never the event or a
 * secret. Answers once Lambda has accepted the event (202); a refusal throws, so the delivery's message
 * comes back on the queue.
 *
 * One signed `POST /2015-03-31/functions/<name>/invocations` (Lambda's Invoke API), not the Lambda
 * client: that client is 70 KB of the worker's bundle for this one call (README, "The hand-off's
 * bundle"). SigV4 by the signer every SDK client bundles, with the SQS client's resolved credentials
 * (Lambda's environment ones, with their session token), region and sha256: nothing added.
 */

/** How long Lambda gets to accept the event before the message goes back on the queue. */
export const HAND_OFF_TIMEOUT_MS = 5000;

/** The path of Lambda's Invoke API for a function. */
export const invokePath = (functionName: string) =>
  `/2015-03-31/functions/${encodeURIComponent(functionName)}/invocations`;

/** The slow try's deployed name (lib/environment.ts: `access.invokes`). */
const slowTryFunction = () => {
  const name = process.env.EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME;
  if (!name) throw new Error('environment variable EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME is not set');
  return name;
};

let signer: SignatureV4 | undefined;
const signerOf = () => {
  signer ??= new SignatureV4({
    service: 'lambda',
    region: sqs.config.region,
    credentials: sqs.config.credentials,
    sha256: sqs.config.sha256,
  });
  return signer;
};

/** Lambda's endpoint: `AWS_ENDPOINT_URL_LAMBDA` (the local runtime's Invoke API) or the region's. */
const lambdaEndpoint = async () =>
  new URL(process.env.AWS_ENDPOINT_URL_LAMBDA || `https://lambda.${await sqs.config.region()}.amazonaws.com`);

/** The invoke, signed: its URL and the headers to send (`host` is fetch's own, the same). */
const signedInvoke = async (functionName: string, body: string) => {
  const endpoint = await lambdaEndpoint();
  const path = `${endpoint.pathname.replace(/\/$/, '')}${invokePath(functionName)}`;
  const signed = await signerOf().sign({
    method: 'POST',
    protocol: endpoint.protocol,
    hostname: endpoint.hostname,
    ...(endpoint.port ? { port: Number(endpoint.port) } : {}),
    path,
    query: {},
    headers: { host: endpoint.host, 'content-type': 'application/json', 'x-amz-invocation-type': 'Event' },
    body,
  });
  const { host: _host, ...headers } = signed.headers;
  return { url: new URL(path, endpoint.origin), headers };
};

/**
 * Lambda's refusal as an error named by its type (`x-amzn-errortype`: `AccessDeniedException` and
 * `ResourceNotFoundException` count as systemic, as the client's errors did), status and type only.
 */
const refusal = (response: Response) => {
  const type = response.headers.get('x-amzn-errortype')?.split(':')[0];
  const error = new Error(`the slow try's invoke was answered ${response.status}${type ? ` ${type}` : ''}, not 202`);
  if (type) error.name = type;
  return error;
};

export const handOffSlowTry = async ({ eventId, endpointId, attempts, requestId, deferrals }: DeliveryMessage) => {
  const message: DeliveryMessage = { eventId, endpointId, attempts, requestId, ...(deferrals ? { deferrals } : {}) };
  const body = JSON.stringify(message);
  const { url, headers } = await signedInvoke(slowTryFunction(), body);
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(HAND_OFF_TIMEOUT_MS),
  }).catch((error: Error) => {
    // fetch's `TypeError` would read as a bug (a systemic error): a connection lost or timed out is not one.
    const code = (error.cause as { code?: string } | undefined)?.code ?? error.name;
    throw Object.assign(new Error(`the slow try's invoke got no answer (${code})`), { name: 'LambdaInvokeUnanswered' });
  });
  // Read to its end, so the connection is free again; its text is never shown.
  await response.arrayBuffer().catch(() => undefined);
  if (response.status !== 202) throw refusal(response);
};
