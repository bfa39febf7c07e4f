/**
 * The part of autocannon 9's API that bench/e2e.ts uses (autocannon ships no types, and
 * @types/autocannon is not worth a dependency for one script).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Called before each request is written; answers the request to send (falsy stops the run). */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | undefined;
      onResponse?: (
        status: number,
        body: string,
        context: Record<string, unknown>,
        headers: Record<string, string>,
      ) => void;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Requests per second over all connections (each connection gets its share, per second). */
      overallRate?: number;
      /** Stop after this many requests; `duration` is ignored then. */
      amount?: number;
      duration?: number;
      /** Seconds. */
      timeout?: number;
      requests?: Request[];
    }

    interface Histogram {
      average: number;
      p50: number;
      p90: number;
      p99: number;
      max: number;
    }

    interface Result {
      requests: Histogram & { sent: number; total: number };
      latency: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
      duration: number;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
      ): this;
      on(event: string, listener: (...args: any[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
