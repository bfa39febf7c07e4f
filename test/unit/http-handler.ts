/** A route's handler as a unit suite calls it: an API Gateway event in, the HTTP answer out. */
export type HttpHandler = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers?: Record<string, string>; body?: string }>;

/** A platform's webhook as API Gateway hands it over: a POST of `body` to `path` (base64 when `base64`). */
export const webhookEvent = (path: string, headers: Record<string, string>, body: string, base64 = false) => ({
  version: '2.0',
  headers: { 'content-type': 'application/json', ...headers },
  body: base64 ? Buffer.from(body).toString('base64') : body,
  isBase64Encoded: base64,
  requestContext: { http: { method: 'POST', path } },
});

/** Calls a webhook route's handler with `event`: the answer's status, and its body parsed. */
export const callWebhook = async (handler: unknown, event: unknown) => {
  const context = { awsRequestId: 'x', getRemainingTimeInMillis: () => 1000 };
  const res = await (handler as HttpHandler)(event, context);
  return { status: res.statusCode, body: JSON.parse(res.body ?? 'null') };
};
