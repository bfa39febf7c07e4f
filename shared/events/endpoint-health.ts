import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/logger.js';
import { dynamo } from '../dynamo/client.js';
import { isConditionFailure, TABLE } from '../dynamo/table.js';
import { type WebhookEndpoint, webhookEndpointKey } from '../entities/webhook-endpoint.js';

/**
 * Whether an endpoint still deserves deliveries (CONTRACT.md §14), in the manner of Svix: it is
 * `failingSince` its first failed try after a delivered one; when every try has failed for 5 days
 * (ENDPOINT_FAILING_SECONDS) it is disabled, with its reason. A change of the endpoint (a PATCH
 * enabling it again, a new URL) starts the 5 days again: they count from its `updatedAt` at the latest.
 */

export const DISABLED_REASON = 'every delivery failed for 5 days';

/** A conditional update whose condition failing means another worker did it first. */
const updateIf = async (input: ConstructorParameters<typeof UpdateCommand>[0]) => {
  try {
    await dynamo.send(new UpdateCommand(input));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

/** A delivered try: the endpoint is no longer failing (one write only when it was). */
export const endpointSucceeded = async (endpoint: WebhookEndpoint) => {
  if (!endpoint.failingSince) return;
  await updateIf({
    TableName: TABLE(),
    Key: webhookEndpointKey(endpoint.ownerId, endpoint.id),
    UpdateExpression: 'REMOVE failingSince',
    ConditionExpression: 'attribute_exists(PK)',
  });
};

/** A failed try: the endpoint is failing from now, unless it already was; disabled after 5 days of it. */
export const endpointFailed = async (endpoint: WebhookEndpoint, at = Date.now()) => {
  const key = webhookEndpointKey(endpoint.ownerId, endpoint.id);
  if (!endpoint.failingSince) {
    return updateIf({
      TableName: TABLE(),
      Key: key,
      UpdateExpression: 'SET failingSince = :now',
      ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(failingSince) OR failingSince = :null)',
      ExpressionAttributeValues: { ':now': new Date(at).toISOString(), ':null': null },
    });
  }
  const since = Math.max(Date.parse(endpoint.failingSince), Date.parse(endpoint.updatedAt));
  if (endpoint.status !== 'enabled' || at - since < config.endpointFailingSeconds() * 1000) return;
  await updateIf({
    TableName: TABLE(),
    Key: key,
    UpdateExpression: 'SET #status = :disabled, disabledReason = :reason, updatedAt = :now',
    // Not if a delivery succeeded meanwhile, or the endpoint was changed.
    ConditionExpression: 'failingSince = :since AND updatedAt = :updated AND #status = :enabled',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':disabled': 'disabled',
      ':enabled': 'enabled',
      ':reason': DISABLED_REASON,
      ':now': now(),
      ':since': endpoint.failingSince,
      ':updated': endpoint.updatedAt,
    },
  });
  logger.warn('webhook endpoint disabled: every delivery failed for 5 days');
};
