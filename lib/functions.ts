import {
  type Access,
  authorizer,
  type ConsumerSpec,
  consoleRoute,
  consumers,
  fallbackRoute,
  type QueueName,
  type RouteSpec,
  routes,
} from './routes.js';

/**
 * Every function of lib/routes.ts in one flat list: the routes, the authorizer, the consumers. The
 * stack deploys it, the local runtime runs it and the benchmarks measure it.
 */

export const HTTP_ROUTE_TIMEOUT_SECONDS = 10;
export const AUTHORIZER_TIMEOUT_SECONDS = 5;

/** One deployable function, whatever kind of entry of lib/routes.ts it came from. */
export interface FunctionSpec {
  /** PascalCase, unique: the construct id and part of the function name. */
  name: string;
  /** Handler module relative to the project root; it exports `handler`. */
  entry: string;
  access: Access;
  timeoutSeconds: number;
  description: string;
  /** The queue whose messages invoke it. */
  consumes?: QueueName;
  /** The entry it came from: a route, a consumer, or neither for the authorizer and the `$default` route. */
  route?: RouteSpec;
  /** The `$default` route's function (lib/routes.ts `fallbackRoute`). */
  fallback?: true;
  /** The operator console's files (lib/routes.ts `consoleRoute`): bundled with them (lib/console-build.ts). */
  console?: true;
  consumer?: ConsumerSpec;
}

export const consumedQueue = (consumer: ConsumerSpec): QueueName | undefined =>
  'queue' in consumer.trigger ? consumer.trigger.queue : undefined;

/** The consumers whose `access.invokes` names `name`. */
const invokersOf = (name: string) => consumers.filter((c) => c.access.invokes?.includes(name)).map((c) => c.name);

export const allFunctions = (): FunctionSpec[] => [
  ...routes.map((route) => ({
    name: route.name,
    entry: route.entry,
    access: route.access,
    timeoutSeconds: HTTP_ROUTE_TIMEOUT_SECONDS,
    description: `${route.method} ${route.path}`,
    route,
  })),
  {
    name: fallbackRoute.name,
    entry: fallbackRoute.entry,
    access: fallbackRoute.access,
    timeoutSeconds: HTTP_ROUTE_TIMEOUT_SECONDS,
    description: '$default route: 404 for an unknown route or method',
    fallback: true as const,
  },
  {
    name: consoleRoute.name,
    entry: consoleRoute.entry,
    access: consoleRoute.access,
    timeoutSeconds: HTTP_ROUTE_TIMEOUT_SECONDS,
    description: `GET ${consoleRoute.paths.join(', ')}: the operator console's files`,
    console: true as const,
  },
  {
    name: authorizer.name,
    entry: authorizer.entry,
    access: authorizer.access,
    timeoutSeconds: AUTHORIZER_TIMEOUT_SECONDS,
    description: 'Bearer API key authorizer of the HTTP API',
  },
  ...consumers.map((consumer) => ({
    name: consumer.name,
    entry: consumer.entry,
    access: consumer.access,
    timeoutSeconds: consumer.timeoutSeconds,
    description:
      'queue' in consumer.trigger
        ? `Consumer of the ${consumer.trigger.queue} queue`
        : 'invoked' in consumer.trigger
          ? `Invoked asynchronously by ${invokersOf(consumer.name).join(', ')}`
          : 'stream' in consumer.trigger
            ? "Consumer of the table's change stream"
            : 'pollInterval' in consumer.trigger
              ? 'Every poll interval (-c pollIntervalSeconds, default 15 minutes)'
              : `Every ${consumer.trigger.scheduleMinutes} minutes`,
    consumes: consumedQueue(consumer),
    consumer,
  })),
];
