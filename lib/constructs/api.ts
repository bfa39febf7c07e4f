import { Duration, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as route53Targets from 'aws-cdk-lib/aws-route53-targets';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../../shared/core/telemetry.js';
import type { DeployConfig } from '../config.js';
import { acknowledge } from '../nag.js';
import { authorizer, consoleRoute, fallbackRoute, routes } from '../routes.js';

/**
 * One JSON line per request in the access log. `requestId` is what the function's lines carry as
 * `correlation_id` (next to the service's own `request_id`), and `integrationRequestId` is the
 * invocation's `function_request_id`: from either, the function's lines of that request are found.
 */
const ACCESS_LOG_FORMAT = {
  // The webhook metric filters below take it as a dimension: two stages' APIs never share a metric.
  apiId: '$context.apiId',
  requestId: '$context.requestId',
  integrationRequestId: '$context.integration.requestId',
  requestTime: '$context.requestTime',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatency: '$context.integrationLatency',
  integrationErrorMessage: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
};

/** The `$default` route only answers 404: a trickle is plenty. */
export const FALLBACK_THROTTLE = { rate: 10, burst: 20 };

/** The route keys of the platforms' deliveries, as API Gateway and the access log name them. */
export const WEBHOOK_ROUTE_KEYS = routes.filter((r) => r.auth === 'webhook').map((r) => `${r.method} ${r.path}`);

/** What the access log's metric filters count of the webhook routes' answers, by the `status` they log. */
export const WEBHOOK_RESPONSE_METRICS = {
  /** A delivery refused with 429: a platform retries it, and gives up on a subscription that keeps failing. */
  WebhookThrottled: '"429"',
  WebhookServerErrors: '"5*"',
} as const;
export type WebhookResponseMetric = keyof typeof WEBHOOK_RESPONSE_METRICS;

/**
 * The webhook routes' 429s or 5xx together, as counted from the access log. Counted there rather than read
 * from API Gateway's route metrics: those have no 429 of their own (a 429 is one of the `4xx`, with every
 * refused signature). One metric for every webhook route (no route dimension): one alarm reads it, where
 * one a route cost $0.10 a month each (issue 44); the access log's lines name the route.
 */
export const webhookResponseMetric = (api: apigw.IHttpApi, name: WebhookResponseMetric) =>
  new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { ApiId: api.apiId },
    statistic: 'Sum',
    period: Duration.minutes(5),
  });

/** The custom domain: an existing certificate, or a DNS-validated one in the zone with the alias record. */
const addDomain = (scope: Construct, config: DeployConfig): apigw.DomainName | undefined => {
  const { domainName, certificateArn, hostedZoneId, hostedZoneName } = config;
  if (!domainName) return undefined;
  const zone =
    hostedZoneId && hostedZoneName
      ? route53.HostedZone.fromHostedZoneAttributes(scope, 'ApiHostedZone', {
          hostedZoneId,
          zoneName: hostedZoneName,
        })
      : undefined;
  const certificate = certificateArn
    ? acm.Certificate.fromCertificateArn(scope, 'ApiCertificate', certificateArn)
    : new acm.Certificate(scope, 'ApiCertificate', {
        domainName,
        validation: acm.CertificateValidation.fromDns(zone),
      });
  const domain = new apigw.DomainName(scope, 'ApiDomain', {
    domainName,
    certificate,
    securityPolicy: apigw.SecurityPolicy.TLS_1_2,
  });
  if (zone) {
    new route53.ARecord(scope, 'ApiAliasRecord', {
      zone,
      recordName: domainName,
      target: route53.RecordTarget.fromAlias(
        new route53Targets.ApiGatewayv2DomainProperties(domain.regionalDomainName, domain.regionalHostedZoneId),
      ),
    });
  }
  return domain;
};

const WEBHOOK_AUTHENTICATION =
  'A webhook is authenticated by the HMAC of its raw body, which the handler checks and an authorizer cannot see.';
const CONSOLE_AUTHENTICATION =
  'The console routes answer the same static files to everyone; its page sends its user’s API key to the API.';

/**
 * The API's one stage, `$default`: its access log (with the webhooks' 429s and 5xx counted from it), its
 * throttles, and the webhook routes' own.
 */
const addStage = (scope: Construct, config: DeployConfig, api: apigw.HttpApi, domain?: apigw.DomainName) => {
  const accessLogs = new logs.LogGroup(scope, 'ApiAccessLogs', {
    retention: config.logRetentionDays,
    removalPolicy: config.removalPolicy,
  });
  const stage = api.addStage('DefaultStage', {
    stageName: '$default',
    autoDeploy: true,
    throttle: { rateLimit: config.throttleRate, burstLimit: config.throttleBurst },
    domainMapping: domain ? { domainName: domain } : undefined,
    accessLogSettings: {
      destination: new apigw.LogGroupLogDestination(accessLogs),
      format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FORMAT)),
    },
  });

  // The platforms' deliveries get throttles of their own, each route its own bucket, and the catch-all
  // route a small one: a flood of API calls or of unknown paths never gets a webhook answered 429 (a
  // platform gives up on a subscription that keeps failing). Route metrics (six custom metrics a route)
  // only with -c routeMetrics=true: the access log's filters below count the webhooks' 429s and 5xx.
  const routeSettings = Object.fromEntries([
    ...WEBHOOK_ROUTE_KEYS.map((routeKey) => [
      routeKey,
      {
        ThrottlingRateLimit: config.webhookThrottleRate,
        ThrottlingBurstLimit: config.webhookThrottleBurst,
        ...(config.routeMetrics ? { DetailedMetricsEnabled: true } : {}),
      },
    ]),
    ['$default', { ThrottlingRateLimit: FALLBACK_THROTTLE.rate, ThrottlingBurstLimit: FALLBACK_THROTTLE.burst }],
  ]);
  (stage.node.defaultChild as apigw.CfnStage).addPropertyOverride('RouteSettings', routeSettings);

  // The webhooks' 429s and 5xx, counted from the access log, every webhook route together (webhookResponseMetric).
  for (const [name, status] of Object.entries(WEBHOOK_RESPONSE_METRICS)) {
    const onWebhookRoute = WEBHOOK_ROUTE_KEYS.map((key) => `$.routeKey = "${key}"`).join(' || ');
    new logs.MetricFilter(scope, `${name}Filter`, {
      logGroup: accessLogs,
      filterPattern: logs.FilterPattern.literal(`{ $.status = ${status} && (${onWebhookRoute}) }`),
      metricNamespace: METRICS_NAMESPACE,
      metricName: name,
      metricValue: '1',
      dimensions: { ApiId: '$.apiId' },
      unit: cloudwatch.Unit.COUNT,
    });
  }

  return stage;
};

/** A route of `api` in `routeParent`, as HttpApi.addRoutes makes it (the same construct id). */
const routeAdder =
  (api: apigw.HttpApi, routeParent: Construct) =>
  (options: {
    path: string;
    method: apigw.HttpMethod;
    integration: HttpLambdaIntegration;
    authorizer?: HttpLambdaAuthorizer;
  }) =>
    new apigw.HttpRoute(routeParent, `${options.method}${options.path}`, {
      httpApi: api,
      routeKey: apigw.HttpRouteKey.with(options.path, options.method),
      integration: options.integration,
      authorizer: options.authorizer,
    });

/** Every route of the API (lib/routes.ts), the console's files and the `$default` catch-all, in `routeParent`. */
const addRoutes = (
  config: DeployConfig,
  api: apigw.HttpApi,
  functions: Map<string, lambda.Function>,
  routeParent: Construct,
) => {
  // The verdict is cached by the Authorization header, for `authorizerCacheSeconds`: a key's owner is
  // read once per TTL, not twice per call. The verdict depends on that header alone (functions/authorizer.ts),
  // so one key's verdict is never another's. The price: API Gateway answers a request without the header
  // with its own `401 {"message":"Unauthorized"}` before the authorizer runs (docs/design.md,
  // "Authentication"). With the cache off there is no identity source, and every request reaches the
  // authorizer, which always allows and passes the owner (or nothing) for the route's 401.
  const cached = config.authorizerCacheSeconds > 0;
  const apiKeyAuthorizer = new HttpLambdaAuthorizer('ApiKeyAuthorizer', functions.get(authorizer.name)!, {
    responseTypes: [HttpLambdaResponseType.SIMPLE],
    resultsCacheTtl: Duration.seconds(config.authorizerCacheSeconds),
    identitySource: cached ? ['$request.header.Authorization'] : [],
  });

  const addRoute = routeAdder(api, routeParent);

  for (const route of routes) {
    const httpRoute = addRoute({
      path: route.path,
      method: apigw.HttpMethod[route.method],
      integration: new HttpLambdaIntegration(`${route.name}Integration`, functions.get(route.name)!, {
        payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
      }),
      authorizer: route.auth === 'apiKey' ? apiKeyAuthorizer : undefined,
    });
    if (route.auth === 'webhook') acknowledge(httpRoute, 'AwsSolutions-APIG4', WEBHOOK_AUTHENTICATION);
  }

  // The operator console's files, from the API's own origin: its page calls the API with the key its
  // user pastes, so the routes need no authorizer (docs/design.md, "Operator console").
  const consoleIntegration = new HttpLambdaIntegration(
    `${consoleRoute.name}Integration`,
    functions.get(consoleRoute.name)!,
    {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    },
  );
  for (const path of consoleRoute.paths) {
    const httpRoute = addRoute({ path, method: apigw.HttpMethod.GET, integration: consoleIntegration });
    acknowledge(httpRoute, 'AwsSolutions-APIG4', CONSOLE_AUTHENTICATION);
  }

  // `$default` catches every request no route matches, so API Gateway's own 404 body (no
  // Request-Id, no standard headers) never reaches a client: the function answers the contract's.
  const fallback = new apigw.HttpRoute(routeParent, 'DefaultRoute', {
    httpApi: api,
    routeKey: apigw.HttpRouteKey.DEFAULT,
    integration: new HttpLambdaIntegration(`${fallbackRoute.name}Integration`, functions.get(fallbackRoute.name)!, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    }),
  });
  acknowledge(fallback, 'AwsSolutions-APIG4', 'The $default route only answers 404; it reads and returns nothing.');
};

/**
 * The HTTP API: its throttled stage with an access log, the bearer-key authorizer, and one route
 * per entry of lib/routes.ts, each integrated with its own function. The routes (with their
 * integrations, permissions and the authorizer) go under `routesScope` (a nested stack of
 * lib/stack.ts; by default the API itself), the API, its stage and domain under `scope`.
 */
export const addApi = (
  scope: Construct,
  config: DeployConfig,
  functions: Map<string, lambda.Function>,
  routesScope?: Construct,
): { api: apigw.HttpApi; stage: apigw.HttpStage; domain?: apigw.DomainName } => {
  const domain = addDomain(scope, config);
  const api = new apigw.HttpApi(scope, 'Api', {
    apiName: Stack.of(scope).stackName,
    description: 'Reseller order routing',
    // The stage is added below, with access logs and throttling, which the default stage lacks.
    createDefaultStage: false,
    // With a domain of its own, the API answers there only: every shop's subscriptions name that host,
    // which outlives a replaced API, and nothing reaches the API around it.
    disableExecuteApiEndpoint: domain !== undefined,
  });

  const stage = addStage(scope, config, api, domain);
  // As HttpApi.addRoutes makes them (the same construct ids), in routesScope.
  addRoutes(config, api, functions, routesScope ?? api);
  return { api, stage, domain };
};
