import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { DeliveryMessage } from './delivery-queue.js';

/**
 * The hand-off of a try that could hang (shared/events/README.md, "Integrators isolated"): the delivery
 * worker invokes `EventDeliverySlowTry` asynchronously (InvocationType `Event`: Lambda's own queue,
 * no idle cost) with the try's message, ids only as on the delivery queue, never the event or a
 * secret. Answers once Lambda has accepted the event (202); a refusal throws, so the delivery's message
 * comes back on the queue.
 */

const lambda = new LambdaClient({});

/** The slow try's deployed name (lib/environment.ts: `access.invokes`). */
const slowTryFunction = () => {
  const name = process.env.EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME;
  if (!name) throw new Error('environment variable EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME is not set');
  return name;
};

export const handOffSlowTry = async ({ eventId, endpointId, attempts, requestId, deferrals }: DeliveryMessage) => {
  const message: DeliveryMessage = { eventId, endpointId, attempts, requestId, ...(deferrals ? { deferrals } : {}) };
  const out = await lambda.send(
    new InvokeCommand({
      FunctionName: slowTryFunction(),
      InvocationType: 'Event',
      Payload: new TextEncoder().encode(JSON.stringify(message)),
    }),
  );
  if (out.StatusCode !== 202) throw new Error(`the slow try's invoke was answered ${out.StatusCode}, not 202`);
};
