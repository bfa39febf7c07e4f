import { config } from '../core/config.js';
import { type Fields, isText, parseWith, sendWork, type WorkMessage, workFields } from '../work/runner.js';

/**
 * One try of an event's delivery to one endpoint (CONTRACT.md §14): ids only, never the event's
 * object or a secret. `attempts` is the delivery's count when the message was sent: a message whose
 * count the delivery has moved past is stale (another message already tried it).
 */
export interface DeliveryMessage extends WorkMessage {
  eventId: string;
  endpointId: string;
  attempts: number;
  /** How often this try was put back because every lease of its endpoint was held (delivery-worker.ts). */
  deferrals?: number;
}

const readDelivery = (parsed: Fields): DeliveryMessage | undefined =>
  isText(parsed.eventId) && isText(parsed.endpointId) && Number.isSafeInteger(parsed.attempts)
    ? {
        ...workFields(parsed),
        eventId: parsed.eventId,
        endpointId: parsed.endpointId,
        attempts: Number(parsed.attempts),
        ...(Number.isSafeInteger(parsed.deferrals) ? { deferrals: Number(parsed.deferrals) } : {}),
      }
    : undefined;

/**
 * A delivery's message; also the invocation record Lambda sets in the delivery DLQ when a slow try's
 * event failed (its `requestPayload` is the try's message), so a redrive of the DLQ into the delivery
 * queue tries the delivery again.
 */
export const parseDeliveryMessage = (body: string) =>
  parseWith(body, (parsed) =>
    parsed.requestPayload && typeof parsed.requestPayload === 'object'
      ? readDelivery(parsed.requestPayload as Fields)
      : readDelivery(parsed),
  );

export const deliveryLogContext = (message: DeliveryMessage) => ({
  eventId: message.eventId,
  endpointId: message.endpointId,
  request_id: message.requestId,
});

/** The messages of deliveries due in `delaySeconds` (up to SQS's 15 minutes; `notBefore` carries a longer wait). */
export const sendDeliveries = (messages: DeliveryMessage[], delaySeconds = 0) =>
  sendWork(config.deliveryQueueUrl(), messages, delaySeconds);
