import type { SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { logger, withMessageContext } from '../core/telemetry.js';
import { parseWithExactIntegers } from '../domain/orders.js';
import { forgetAppWebhook, readAppWebhook } from '../entities/app-webhook.js';
import { isText, parseWith } from '../work/runner.js';
import type { AppWebhookMessage } from './intake.js';
import { APP_TOPICS } from './topics.js';

const parseMessage = (body: string) =>
  parseWith<AppWebhookMessage>(body, (parsed) =>
    isText(parsed.appWebhookId)
      ? { appWebhookId: parsed.appWebhookId, ...(isText(parsed.requestId) ? { requestId: parsed.requestId } : {}) }
      : undefined,
  );

/**
 * The app-webhook queue's consumer: one kept delivery per message, handled by its topic's handler,
 * then forgotten (its body goes with it). A throw leaves the message to SQS: delivered again, then
 * dead-lettered after its receives, the delivery still kept for the retry.
 */
export const processAppWebhookMessage = async (
  deps: Pick<Deps, 'cipher'>,
  received: SQSRecord,
): Promise<MessageOutcome> => {
  const message = parseMessage(received.body);
  if (!message) {
    logger.error('dropping a malformed app-webhook message', { messageId: received.messageId });
    return 'done';
  }
  return withMessageContext(
    { appWebhookId: message.appWebhookId, requestId: message.requestId },
    'app webhook failed unexpectedly; SQS will retry',
    async (): Promise<MessageOutcome> => {
      const hook = await readAppWebhook(message.appWebhookId);
      if (!hook) {
        logger.info('app webhook already handled; message dropped');
        return 'done';
      }
      const topic = APP_TOPICS[hook.topic];
      if (topic) {
        const payload = parseWithExactIntegers(hook.body);
        await topic.handle(deps, { ...hook, payload });
        logger.info('app webhook handled', { topic: hook.topic });
      } else logger.warn('app webhook of a topic no longer handled; forgotten', { topic: hook.topic });
      await forgetAppWebhook(hook.id);
      return 'done';
    },
  );
};
