import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { newId } from '../../shared/core/ids.js';
import { STANDARD_HEADERS } from '../../shared/http/handler.js';
import { consoleRoute, type HttpMethod, type RouteSpec } from '../routes.js';

/**
 * The local stand-in for API Gateway (HTTP API, payload 2.0): matches a request against the
 * route table, runs the authorizer for bearer-key routes, builds the very event API Gateway
 * would send, and invokes the route's function.
 */

/** Invokes a function by name and answers its result; throws when the invocation failed. */
export type Invoke = (functionName: string, event: unknown) => Promise<any>;

/** API Gateway hands text bodies through as they are and base64-encodes everything else. */
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded))/i;
const MAX_BODY = 10 * 1024 * 1024;
/**
 * Lambda's limit for a synchronous invocation's event: a request whose body makes a larger event
 * never reaches the function on AWS, and API Gateway answers it with its own body. The service's own
 * limits (64 KiB, 1 MiB) are far below, so only a hostile request meets it, here as there.
 */
export const MAX_EVENT_BYTES = 6 * 1024 * 1024;

const compile = (path: string) => {
  const names: string[] = [];
  // `{name+}` is API Gateway's greedy variable: the rest of the path, slashes included, never empty
  // (as there: `/console/` matches no route and goes to `$default`, which sends it on to `/console`).
  const pattern = path.replace(/\{(\w+)(\+?)\}/g, (_, name: string, greedy: string) => {
    names.push(name);
    return greedy ? '(.+)' : '([^/]+)';
  });
  return { regex: new RegExp(`^${pattern}$`), names };
};

/** A malformed escape (`%ZZ`) stays as sent, so the route answers its own 404 rather than crashing. */
const decodeSegment = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer | 'too_large'>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });

const joinHeaders = (req: IncomingMessage) => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
};

interface FrontOptions {
  port: number;
  routes: RouteSpec[];
  authorizerName: string;
  /** The `$default` route's function: whatever no route matches (lib/routes.ts `fallbackRoute`). */
  fallbackName: string;
  /** The operator console's function (lib/routes.ts `consoleRoute`): `GET /console` and below, no authorizer. */
  consoleName?: string;
  invoke: Invoke;
}

/** The routes, the console's among them, each with its path's pattern. */
const routeTable = (options: FrontOptions) => {
  const consoleRoutes: RouteSpec[] = options.consoleName
    ? consoleRoute.paths.map((path) => ({
        name: options.consoleName!,
        method: 'GET',
        path,
        entry: consoleRoute.entry,
        // Not an API key route: no authorizer, as on AWS.
        auth: 'webhook',
        access: consoleRoute.access,
      }))
    : [];
  return [...options.routes, ...consoleRoutes].map((spec) => ({ spec, ...compile(spec.path) }));
};
type Route = ReturnType<typeof routeTable>[number];

type Send = (status: number, headers: Record<string, string>, body?: string | Buffer) => void;
const JSON_TYPE = { 'Content-Type': 'application/json' };

/** API Gateway sends what no route matches to the `$default` route, body unread. */
const answerDefault = async (options: FrontOptions, req: IncomingMessage, url: URL, send: Send) => {
  const method = (req.method ?? 'GET').toUpperCase();
  const context = {
    requestId: newId('req'),
    http: { method, path: url.pathname },
    routeKey: '$default',
    stage: '$default',
  };
  req.resume();
  const result = await options.invoke(options.fallbackName, {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers: joinHeaders(req),
    requestContext: context,
    isBase64Encoded: false,
  });
  return send(result.statusCode, result.headers ?? {}, result.body);
};

/** The request context API Gateway builds for a matched route. */
const requestContextOf = (req: IncomingMessage, url: URL, route: Route, headers: Record<string, string>) => {
  const now = new Date();
  const method = route.spec.method;
  return {
    accountId: '000000000000',
    apiId: 'local',
    domainName: headers.host ?? 'localhost',
    domainPrefix: 'local',
    http: {
      method,
      path: url.pathname,
      protocol: 'HTTP/1.1',
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
      userAgent: headers['user-agent'] ?? '',
    },
    requestId: newId('req'),
    routeKey: `${method} ${route.spec.path}`,
    stage: '$default',
    time: now.toUTCString(),
    timeEpoch: now.getTime(),
  } as Record<string, any>;
};

/** The payload 2.0 event of a matched route's request. */
const routeEvent = (
  req: IncomingMessage,
  url: URL,
  { route, match }: { route: Route; match: RegExpExecArray },
  { raw, binary, headers }: { raw: Buffer; binary: boolean; headers: Record<string, string> },
) => {
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
  const pathParameters = Object.fromEntries(route.names.map((name, i) => [name, decodeSegment(match[i + 1])]));
  const requestContext = requestContextOf(req, url, route, headers);
  return {
    version: '2.0',
    routeKey: requestContext.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(route.names.length ? { pathParameters } : {}),
    requestContext,
    ...(raw.length
      ? { body: raw.toString(binary ? 'base64' : 'utf8'), isBase64Encoded: binary }
      : { isBase64Encoded: false }),
  };
};

/** The request's body and whether it goes base64-encoded; `too_large` when its event passes Lambda's limit. */
const readEventBody = async (req: IncomingMessage, headers: Record<string, string>) => {
  const raw = await readBody(req);
  if (raw === 'too_large') return 'too_large';
  const binary = raw.length > 0 && !TEXT_TYPES.test(headers['content-type'] ?? '');
  // The event carries a binary body base64-encoded: a third larger.
  const eventBytes = binary ? Math.ceil(raw.length / 3) * 4 : raw.length;
  return eventBytes > MAX_EVENT_BYTES ? 'too_large' : { raw, binary };
};

/** Whether the route's authorizer lets the request through; its context goes into the event. */
const authorize = async (options: FrontOptions, route: Route, event: ReturnType<typeof routeEvent>) => {
  if (route.spec.auth !== 'apiKey') return true;
  const verdict = await options.invoke(options.authorizerName, {
    ...event,
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:local:${route.spec.method}${route.spec.path}`,
    identitySource: [],
  });
  if (!verdict?.isAuthorized) return false;
  event.requestContext.authorizer = { lambda: verdict.context ?? {} };
  return true;
};

const handleRequest = async (options: FrontOptions, table: Route[], req: IncomingMessage, send: Send) => {
  const url = new URL(req.url ?? '/', 'http://local');
  const method = (req.method ?? 'GET').toUpperCase() as HttpMethod;
  const found = table
    .filter((r) => r.spec.method === method)
    .map((r) => ({ route: r, match: r.regex.exec(url.pathname) }))
    .find((m) => m.match);
  if (!found) return answerDefault(options, req, url, send);
  const headers = joinHeaders(req);
  const body = await readEventBody(req, headers);
  if (body === 'too_large') return send(413, JSON_TYPE, JSON.stringify({ message: 'Request Entity Too Large' }));
  const event = routeEvent(req, url, { route: found.route, match: found.match! }, { ...body, headers });
  if (!(await authorize(options, found.route, event)))
    return send(403, JSON_TYPE, JSON.stringify({ message: 'Forbidden' }));
  const result = await options.invoke(found.route.spec.name, event);
  const answer = result?.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : result?.body;
  send(result?.statusCode ?? 200, result?.headers ?? {}, answer);
};

// Node hands CONNECT to a 'connect' listener (without one it drops the connection) and a method
// its parser does not know to 'clientError': both get an answer in the contract's shape.
const answerRaw = (socket: Duplex, status: number, reason: string, body: string, requestId: string) => {
  const head = [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Request-Id: ${requestId}`,
    ...Object.entries(STANDARD_HEADERS).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  if (socket.writable) socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
};

const answerConnect = async (options: FrontOptions, req: IncomingMessage, socket: Duplex) => {
  socket.on('error', () => undefined);
  try {
    const requestId = newId('req');
    const result = await options.invoke(options.fallbackName, {
      version: '2.0',
      routeKey: '$default',
      rawPath: req.url ?? '/',
      rawQueryString: '',
      headers: joinHeaders(req),
      requestContext: { requestId, http: { method: 'CONNECT', path: req.url ?? '/' }, routeKey: '$default' },
      isBase64Encoded: false,
    });
    answerRaw(socket, result.statusCode, 'Not Found', result.body ?? '', result.headers?.['Request-Id'] ?? requestId);
  } catch {
    socket.destroy();
  }
};

const answerClientError = (error: Error & { code?: string }, socket: Duplex) => {
  socket.on('error', () => undefined);
  if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
  const requestId = newId('req');
  const body = JSON.stringify({
    error: {
      type: 'invalid_request_error',
      code: 'validation_failed',
      message: 'The request could not be read as HTTP/1.1 (an unknown method, or a malformed request line).',
    },
    request_id: requestId,
  });
  answerRaw(socket, 400, 'Bad Request', body, requestId);
};

const listen = (server: Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });

export const startHttpFront = async (
  options: FrontOptions,
): Promise<{ url: string; port: number; server: Server; stop(): Promise<void> }> => {
  const table = routeTable(options);
  const server = createServer(async (req, res) => {
    const send: Send = (status, headers, body) => {
      res.writeHead(status, { ...headers, ...STANDARD_HEADERS });
      res.end(body);
    };
    try {
      await handleRequest(options, table, req, send);
    } catch (error) {
      // What API Gateway answers when the function fails, times out or its environment dies.
      console.error('local front: the function failed', error);
      send(500, JSON_TYPE, JSON.stringify({ message: 'Internal Server Error' }));
    }
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => answerConnect(options, req, socket));
  server.on('clientError', answerClientError);

  // Clients close idle keep-alive connections first (undici after 4 s), as they do with API Gateway:
  // a server closing one while a request is being sent on it would reset that request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await listen(server, options.port);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
};
