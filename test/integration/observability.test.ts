import { BUSINESS_METRICS, METRICS_NAMESPACE } from '../../shared/core/telemetry.js';
import { metricValues } from './logs.js';
import { createResellerStore, createSourceStore, loggedServiceForSuite } from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * What on-call sees of one order (issue 14): the business metrics its functions emit as EMF lines,
 * and log lines that follow it by its webhook's request id from the webhook to the workers.
 */

jest.setTimeout(60_000);

const { service, log } = loggedServiceForSuite(
  { simulator: { port: 0 } },
  {
    env: {
      // Info lines are where a job's story is told; the local runtime's default keeps only warnings.
      POWERTOOLS_LOG_LEVEL: 'INFO',
      // The metrics are what this suite reads (test/integration/env.ts turns them off elsewhere).
      POWERTOOLS_METRICS_DISABLED: 'false',
    },
    timeoutMs: 120_000,
  },
);
const A = () => service.api('owner_a');
const SECRET = 'whsec_observability';

/** One order to two suppliers, through to both jobs completed: what the tests below read. */
const routeOneOrder = async () => {
  const reseller = await createResellerStore(A(), { webhookSecret: SECRET });
  const acme = await createSourceStore(A(), reseller.id, { vendorTag: 'AcmeObs' });
  const bolt = await createSourceStore(A(), reseller.id, { vendorTag: 'BoltObs' });
  const payload = orderPayload([
    { vendor: 'AcmeObs', price: '13.00' },
    { vendor: 'BoltObs', price: '8.00' },
  ]);
  const from = log.lines().length;
  const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
    shopDomain: reseller.shopDomain,
    secret: SECRET,
    body: payload,
  });
  return { reseller, acme, bolt, payload, receipt, from };
};

describe('one routed order', () => {
  let order: Awaited<ReturnType<typeof routeOneOrder>>;
  let lines: Record<string, any>[];

  beforeAll(async () => {
    order = await routeOneOrder();
    expect(order.receipt.status).toBe(200);
    await Promise.all(order.receipt.body.syncJobIds.map((id: string) => jobReaches(A(), id, 'completed')));
    // The worker writes its metrics when its invocation ends, a moment after the job is completed.
    lines = await eventually(async () => {
      const since = log.lines().slice(order.from);
      return (
        metricValues(
          since.filter((l) => l._aws),
          BUSINESS_METRICS.jobsCompleted,
        ).length >= 2 && since
      );
    });
  }, 60_000);

  it('emits its business metrics as EMF lines in one namespace, dimensioned by service and stage only', () => {
    const emf = lines.filter((line) => line._aws);
    const sum = (name: string) => metricValues(emf, name).reduce((a, b) => a + b, 0);
    expect(sum(BUSINESS_METRICS.ordersReceived)).toBe(1);
    expect(sum(BUSINESS_METRICS.ordersRouted)).toBe(1);
    expect(sum(BUSINESS_METRICS.jobsCreated)).toBe(2);
    expect(sum(BUSINESS_METRICS.jobsCompleted)).toBe(2);
    expect(sum(BUSINESS_METRICS.jobsDead)).toBe(0);
    const latencies = metricValues(emf, BUSINESS_METRICS.webhookToCompletedLatency);
    expect(latencies).toHaveLength(2);
    for (const ms of latencies) expect(ms).toBeGreaterThan(0);

    for (const line of emf) {
      for (const directive of line._aws.CloudWatchMetrics) {
        expect(directive.Namespace).toBe(METRICS_NAMESPACE);
        expect(directive.Dimensions).toEqual([['service', 'stage']]);
        for (const metric of directive.Metrics) expect(Object.values(BUSINESS_METRICS)).toContain(metric.Name);
      }
      expect(line).toMatchObject({ service: 'reseller-routing', stage: 'local' });
      // No id ever becomes a dimension: nothing on the line looks like one.
      expect(JSON.stringify(line)).not.toMatch(/"(rst|sst|sj|req)_/);
    }
    const latency = emf.find((l) => l[BUSINESS_METRICS.webhookToCompletedLatency] !== undefined);
    expect(latency?._aws.CloudWatchMetrics[0].Metrics).toContainEqual({
      Name: BUSINESS_METRICS.webhookToCompletedLatency,
      Unit: 'Milliseconds',
    });
  });

  it('is followed by its webhook request id from the webhook to the worker', () => {
    const requestId = order.receipt.body.request_id;
    const ofOrder = lines.filter((line) => line.request_id === requestId && !line._aws);
    const routed = ofOrder.find((line) => line.message === 'order routed');
    expect(routed).toMatchObject({
      function_request_id: expect.any(String),
      resellerStoreId: order.reseller.id,
      externalOrderId: String(order.payload.id),
      jobIds: order.receipt.body.syncJobIds,
    });
    // API Gateway's request id, which its access log names the request by, on the same line.
    expect(routed?.correlation_id).toEqual(expect.any(String));

    const completed = ofOrder.filter((line) => line.message === 'sync job completed');
    expect(completed.map((line) => line.jobId).sort()).toEqual([...order.receipt.body.syncJobIds].sort());
    for (const line of completed) {
      expect(line).toMatchObject({
        resellerStoreId: order.reseller.id,
        externalOrderId: String(order.payload.id),
        sourceOrderId: expect.any(String),
        function_request_id: expect.any(String),
      });
    }
    // Every line that names one of the order's jobs names its order and request too.
    const aboutJobs = lines.filter((line) => order.receipt.body.syncJobIds.includes(line.jobId));
    expect(aboutJobs.length).toBeGreaterThanOrEqual(2);
    for (const line of aboutJobs) {
      expect(line).toMatchObject({
        request_id: requestId,
        resellerStoreId: order.reseller.id,
        externalOrderId: String(order.payload.id),
      });
    }
  });
});

describe('a job refused by its supplier', () => {
  it('counts a 4xx platform error and a dead job, and logs both with the job and its request', async () => {
    const reseller = await createResellerStore(A(), { webhookSecret: SECRET });
    await createSourceStore(A(), reseller.id, { vendorTag: 'RefusesObs', accessToken: 'tok_fail422' });
    const payload = orderPayload([{ vendor: 'RefusesObs', price: '5.00' }]);
    const from = log.lines().length;
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: SECRET,
      body: payload,
    });
    const [jobId] = receipt.body.syncJobIds;
    await jobReaches(A(), jobId, 'dead');

    const since = await eventually(async () => {
      const newer = log.lines().slice(from);
      return (
        metricValues(
          newer.filter((l) => l._aws),
          BUSINESS_METRICS.jobsDead,
        ).length >= 1 && newer
      );
    });
    // A message may be delivered twice (SQS is at least once): each refusal counts, the job dies once.
    const platformErrors = since.filter((l) => l._aws && l[BUSINESS_METRICS.platformErrors] !== undefined);
    expect(platformErrors.length).toBeGreaterThanOrEqual(1);
    for (const line of platformErrors) {
      expect(line).toMatchObject({ statusClass: '4xx', [BUSINESS_METRICS.platformErrors]: 1 });
      expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'stage', 'statusClass']]);
    }
    expect(
      metricValues(
        since.filter((l) => l._aws),
        BUSINESS_METRICS.jobsDead,
      ),
    ).toEqual([1]);

    const dead = since.find((line) => line.message === 'platform refused the order');
    expect(dead).toMatchObject({
      level: 'WARN',
      ended: 'dead',
      jobId,
      request_id: receipt.body.request_id,
      resellerStoreId: reseller.id,
      externalOrderId: String(payload.id),
      status: 422,
    });
  });
});
