/** A route's handler as a unit suite calls it: an API Gateway event in, the HTTP answer out. */
export type HttpHandler = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers?: Record<string, string>; body?: string }>;
