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

export const startHttpFront = async (options: {
  port: number;
  routes: RouteSpec[];
  authorizerName: string;
  /** The `$default` route's function: whatever no route matches (lib/routes.ts `fallbackRoute`). */
  fallbackName: string;
  /** The operator console's function (lib/routes.ts `consoleRoute`): `GET /console` and below, no authorizer. */
  consoleName?: string;
  invoke: Invoke;
}): Promise<{ url: string; port: number; server: Server; stop(): Promise<void> }> => {
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
  const table = [...options.routes, ...consoleRoutes].map((spec) => ({ spec, ...compile(spec.path) }));

  const server = createServer(async (req, res) => {
    const send = (status: number, headers: Record<string, string>, body?: string) => {
      res.writeHead(status, { ...headers, ...STANDARD_HEADERS });
      res.end(body);
    };
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      const method = (req.method ?? 'GET').toUpperCase() as HttpMethod;
      const found = table
        .filter((r) => r.spec.method === method)
        .map((r) => ({ route: r, match: r.regex.exec(url.pathname) }))
        .find((m) => m.match);
      const requestId = newId('req');
      if (!found) {
        // API Gateway sends what no route matches to the `$default` route, body unread.
        const event = {
          version: '2.0',
          routeKey: '$default',
          rawPath: url.pathname,
          rawQueryString: url.search.slice(1),
        };
        const context = { requestId, http: { method, path: url.pathname }, routeKey: '$default', stage: '$default' };
        req.resume();
        const result = await options.invoke(options.fallbackName, {
          ...event,
          headers: joinHeaders(req),
          requestContext: context,
          isBase64Encoded: false,
        });
        return send(result.statusCode, result.headers ?? {}, result.body);
      }
      const raw = await readBody(req);
      const headers = joinHeaders(req);
      const binary = raw !== 'too_large' && raw.length > 0 && !TEXT_TYPES.test(headers['content-type'] ?? '');
      // The event carries a binary body base64-encoded: a third larger.
      const eventBytes =
        raw === 'too_large' ? Number.POSITIVE_INFINITY : binary ? Math.ceil(raw.length / 3) * 4 : raw.length;
      if (raw === 'too_large' || eventBytes > MAX_EVENT_BYTES)
        return send(
          413,
          { 'Content-Type': 'application/json' },
          JSON.stringify({ message: 'Request Entity Too Large' }),
        );

      const { route, match } = found;
      const query: Record<string, string> = {};
      for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
      const pathParameters = Object.fromEntries(route.names.map((name, i) => [name, decodeSegment(match![i + 1])]));
      const now = new Date();
      const requestContext: Record<string, any> = {
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
        requestId,
        routeKey: `${method} ${route.spec.path}`,
        stage: '$default',
        time: now.toUTCString(),
        timeEpoch: now.getTime(),
      };
      const event = {
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

      if (route.spec.auth === 'apiKey') {
        const verdict = await options.invoke(options.authorizerName, {
          ...event,
          type: 'REQUEST',
          routeArn: `arn:aws:execute-api:local:${route.spec.method}${route.spec.path}`,
          identitySource: [],
        });
        if (!verdict?.isAuthorized)
          return send(403, { 'Content-Type': 'application/json' }, JSON.stringify({ message: 'Forbidden' }));
        requestContext.authorizer = { lambda: verdict.context ?? {} };
      }

      const result = await options.invoke(route.spec.name, event);
      const body = result?.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : result?.body;
      send(result?.statusCode ?? 200, result?.headers ?? {}, body);
    } catch (error) {
      // What API Gateway answers when the function fails, times out or its environment dies.
      console.error('local front: the function failed', error);
      send(500, { 'Content-Type': 'application/json' }, JSON.stringify({ message: 'Internal Server Error' }));
    }
  });

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
  server.on('connect', async (req: IncomingMessage, socket: Duplex) => {
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
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
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
  });

  // Clients close idle keep-alive connections first (undici after 4 s), as they do with API Gateway:
  // a server closing one while a request is being sent on it would reset that request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
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
