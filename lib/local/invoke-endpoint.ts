import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Denial } from './authorize.js';

/**
 * Lambda's Invoke API for the local runtime's functions, on 127.0.0.1: `POST
 * /2015-03-31/functions/<name>/invocations` with the event as its body answers what the function
 * returned, or 200 with `X-Amz-Function-Error: Unhandled` and the error when it threw, as Lambda does.
 * What an operator's command invokes on AWS (`npm run events -- replay-failed` hands the event
 * recorder its records) it invokes here the same way. `X-Amz-Invocation-Type: Event` (asynchronous) is
 * answered 202 once `accept` has kept the event (async-invoke.ts), 404 for a function it does not know.
 *
 * A request must be SigV4-signed (403 `MissingAuthenticationTokenException` otherwise, as Lambda
 * answers); one whose credentials name a function of the runtime is answered what `refuse` says its role
 * refuses (authorize.ts): a function's invoke is checked here, whether an SDK client or a plain signed
 * `fetch` made it (shared/events/delivery-hand-off.ts).
 */
export const startInvokeEndpoint = async (
  invoke: (name: string, event: unknown) => Promise<unknown>,
  accept: (name: string, payload: string) => Promise<boolean> = async () => false,
  refuse: (accessKeyId: string, name: string, path: string) => Denial | undefined = () => undefined,
) => {
  const server = createServer((req, res) => {
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return void res.writeHead(404).end();
    const accessKeyId = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\//.exec(req.headers.authorization ?? '')?.[1];
    if (!accessKeyId)
      return void res
        .writeHead(403, {
          'content-type': 'application/json',
          'x-amzn-errortype': 'MissingAuthenticationTokenException',
        })
        .end(JSON.stringify({ message: 'Missing Authentication Token' }));
    const denial = refuse(accessKeyId, decodeURIComponent(match[1]), req.url ?? '');
    if (denial) return void res.writeHead(denial.statusCode, denial.headers).end(denial.body);
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload ?? null));
      let event: unknown;
      try {
        event = body ? JSON.parse(body) : {};
      } catch {
        return answer(400, { Type: 'User', message: 'InvalidRequestContentException: the event is not JSON' });
      }
      const name = decodeURIComponent(match[1]);
      if (req.headers['x-amz-invocation-type'] === 'Event') {
        const accepted = await accept(name, body || '{}').catch(() => undefined);
        if (accepted) return void res.writeHead(202).end();
        return accepted === false
          ? answer(
              404,
              { Type: 'User', message: `Function not found: ${name}` },
              { 'x-amzn-errortype': 'ResourceNotFoundException' },
            )
          : answer(
              500,
              { Type: 'Service', message: 'the event was not kept' },
              { 'x-amzn-errortype': 'ServiceException' },
            );
      }
      try {
        answer(200, await invoke(name, event));
      } catch (error) {
        answer(
          200,
          { errorType: (error as Error).name, errorMessage: (error as Error).message },
          { 'x-amz-function-error': 'Unhandled' },
        );
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((done) => server.close(() => done())),
  };
};
