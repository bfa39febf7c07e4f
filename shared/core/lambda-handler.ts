import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from './logger.js';

/**
 * A function that is not an HTTP route (the authorizer, a queue consumer, a schedule), as middy
 * runs it: every line it logs carries its Lambda context (function name, invocation id, cold
 * start), reset between invocations, and `own` middlewares run around it (metrics).
 */
export const lambdaHandler = <TEvent, TResult>(
  fn: (event: TEvent, context: Context) => Promise<TResult>,
  ...own: middy.MiddlewareObj<TEvent, TResult>[]
) =>
  middy<TEvent, TResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(own)
    .handler(fn);
