import { Duration, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config.js';
import { acknowledge } from '../nag.js';
import { authorizer, fallbackRoute, routes } from '../routes.js';

/**
 * One JSON line per request in the access log. `requestId` is what the function's lines carry as
 * `correlation_id` (next to the service's own `request_id`), and `integrationRequestId` is the
 * invocation's `function_request_id`: from either, the function's lines of that request are found.
 */
const ACCESS_LOG_FORMAT = {
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

const WEBHOOK_AUTHENTICATION =
  'A webhook is authenticated by the HMAC of its raw body, which the handler checks and an authorizer cannot see.';

/**
 * The HTTP API: its throttled stage with an access log, the bearer-key authorizer, and one route
 * per entry of lib/routes.ts, each integrated with its own function.
 */
export const addApi = (
  scope: Construct,
  config: DeployConfig,
  functions: Map<string, lambda.Function>,
): { api: apigw.HttpApi; stage: apigw.HttpStage } => {
  const api = new apigw.HttpApi(scope, 'Api', {
    apiName: Stack.of(scope).stackName,
    description: 'Reseller order routing',
    // The stage is added below, with access logs and throttling, which the default stage lacks.
    createDefaultStage: false,
  });

  const accessLogs = new logs.LogGroup(scope, 'ApiAccessLogs', {
    retention: config.logRetentionDays,
    removalPolicy: config.removalPolicy,
  });
  const stage = api.addStage('DefaultStage', {
    stageName: '$default',
    autoDeploy: true,
    throttle: { rateLimit: config.throttleRate, burstLimit: config.throttleBurst },
    accessLogSettings: {
      destination: new apigw.LogGroupLogDestination(accessLogs),
      format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FORMAT)),
    },
  });

  // The platforms' deliveries get throttles of their own, and the catch-all route a small one: a flood
  // of API calls or of unknown paths never gets a webhook answered 429 (a platform gives up on a
  // subscription that keeps failing).
  const routeSettings = Object.fromEntries([
    ...routes
      .filter((route) => route.auth === 'webhook')
      .map((route) => [
        `${route.method} ${route.path}`,
        { ThrottlingRateLimit: config.webhookThrottleRate, ThrottlingBurstLimit: config.webhookThrottleBurst },
      ]),
    ['$default', { ThrottlingRateLimit: FALLBACK_THROTTLE.rate, ThrottlingBurstLimit: FALLBACK_THROTTLE.burst }],
  ]);
  (stage.node.defaultChild as apigw.CfnStage).addPropertyOverride('RouteSettings', routeSettings);

  // No identity source and no cache: API Gateway would answer a missing Authorization header with
  // its own 401 body before calling the authorizer, and the contract wants its error shape. So the
  // authorizer runs on every request, always allows, and passes the owner (or nothing) in its
  // context; the route's middleware answers 401 when there is none.
  const apiKeyAuthorizer = new HttpLambdaAuthorizer('ApiKeyAuthorizer', functions.get(authorizer.name)!, {
    responseTypes: [HttpLambdaResponseType.SIMPLE],
    resultsCacheTtl: Duration.seconds(0),
    identitySource: [],
  });

  for (const route of routes) {
    const [httpRoute] = api.addRoutes({
      path: route.path,
      methods: [apigw.HttpMethod[route.method]],
      integration: new HttpLambdaIntegration(`${route.name}Integration`, functions.get(route.name)!, {
        payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
      }),
      authorizer: route.auth === 'apiKey' ? apiKeyAuthorizer : undefined,
    });
    if (route.auth === 'webhook') acknowledge(httpRoute, 'AwsSolutions-APIG4', WEBHOOK_AUTHENTICATION);
  }

  // `$default` catches every request no route matches, so API Gateway's own 404 body (no
  // Request-Id, no standard headers) never reaches a client: the function answers the contract's.
  const fallback = new apigw.HttpRoute(api, 'DefaultRoute', {
    httpApi: api,
    routeKey: apigw.HttpRouteKey.DEFAULT,
    integration: new HttpLambdaIntegration(`${fallbackRoute.name}Integration`, functions.get(fallbackRoute.name)!, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    }),
  });
  acknowledge(fallback, 'AwsSolutions-APIG4', 'The $default route only answers 404; it reads and returns nothing.');
  return { api, stage };
};
