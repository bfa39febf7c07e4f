import type { SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config, throttledPastBudget } from '../core/config.js';
import { BUSINESS_METRICS, countIfSystemic, countMetric, countPlatformError, logger } from '../core/telemetry.js';
import {
  classify,
  type Failure,
  MAX_DEFERRAL_SECONDS,
  platformStatusClass,
  platformStatusOf,
} from '../platforms/failure.js';
import type { Attempt, WorkKind } from './kind.js';
import type { WorkMessage } from './message.js';
import { sendWork, setVisibility } from './queue.js';

/**
 * What a try that threw becomes, for every kind: a 429 defers the item within the throttling budget,
 * a refusal ends it, an unknown outcome lets the kind look for what it made, anything else (an
 * unexpected throw too) is a failure that comes back after its backoff.
 */
export const failed = async <M extends WorkMessage, I, D = Deps>(
  kind: WorkKind<M, I, D>,
  deps: D,
  attempt: Attempt<M, I>,
  error: unknown,
): Promise<MessageOutcome> => {
  const failure = classify(error, kind.internalReason);
  const status = platformStatusOf(error);
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled':
      return throttled(kind, deps, attempt, failure, error);
    case 'permanent': {
      // The kind may look first whether an earlier try made it (then the item ends done, not dead).
      const ended = await kind.end(deps, attempt, failure.reason, status);
      if (ended === 'unknown') return attempt.retry(failure.reason, status);
      logger[kind.words.refusedLevel ?? 'warn'](kind.words.refused, { status: failure.status, ended });
      return 'done';
    }
    case 'unknown_outcome': {
      const reason = kind.unknownOutcome
        ? await kind.unknownOutcome(deps, attempt, failure.reason, status)
        : failure.reason;
      return reason === undefined ? 'done' : attempt.retry(reason, status);
    }
    case 'transient':
      // The service's own error: an unexpected throw gets the backoff like any failure, and one no
      // retry mends (AccessDenied, a bug) is counted apart, for its alarm.
      if (failure.internal) {
        logger.error(`${kind.words.item} failed`, error as Error);
        countIfSystemic(error);
      }
      return attempt.retry(failure.reason, status);
  }
};

/**
 * A 429: the item is deferred, and one fresh message waits for Retry-After (carrying `notBefore` past
 * SQS's 15 minutes), so throttling never uses up a receive. Throttled for longer than the budget
 * (THROTTLE_BUDGET_SECONDS, from its run's first 429), it ends instead.
 */
const throttled = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  deps: D,
  attempt: Attempt<M, I>,
  failure: Extract<Failure, { kind: 'throttled' }>,
  error: unknown,
): Promise<MessageOutcome> => {
  const pastBudget = throttledPastBudget(failure.reason, kind.throttledSince(attempt.item), attempt.startedAt);
  if (pastBudget) {
    const ended = await kind.end(deps, attempt, pastBudget, 429);
    logger.warn(kind.words.throttledPastBudget, { budgetSeconds: config.throttleBudgetSeconds(), ended });
    if (ended !== 'unknown') return 'done';
  }
  const message = await kind.defer(attempt, failure.delaySeconds, failure.reason, error);
  if (message) {
    const notBefore = Date.now() + failure.delaySeconds * 1000;
    const resent = failure.delaySeconds > MAX_DEFERRAL_SECONDS ? { ...message, notBefore } : message;
    await sendWork(kind.queueUrl(), [resent], failure.delaySeconds);
    countMetric(BUSINESS_METRICS.throttleDeferrals);
  }
  logger.warn(kind.words.deferred, { delaySeconds: failure.delaySeconds });
  return 'done';
};

/** The wait after the n-th failed receive of a message: the n-th backoff step, the last one repeating. */
export const backoffOf = <M extends WorkMessage, I, D>(kind: WorkKind<M, I, D>, received: SQSRecord) => {
  const steps = kind.backoffSeconds?.();
  if (!steps) return 0;
  const receive = Math.max(1, Number(received.attributes?.ApproximateReceiveCount) || 1);
  return steps[Math.min(receive, steps.length) - 1] ?? 0;
};

/**
 * A failed try: the item records it, and its message comes back after the kind's backoff (a growing
 * delay, so its receives span an outage instead of being spent within minutes), or, for a kind
 * without one, after the queue's visibility timeout; after `maxReceiveCount`, the dead-letter queue.
 */
export const retry = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  attempt: Attempt<M, I>,
  reason: string,
  status: number | null,
): Promise<MessageOutcome> => {
  const { received } = attempt;
  const waitSeconds = backoffOf(kind, received);
  await kind.fail(attempt, reason, status, waitSeconds);
  if (kind.backoffSeconds) await setVisibility(kind.queueUrl(), received.receiptHandle, waitSeconds);
  logger.warn(`${kind.words.item} failed; SQS will retry`, {
    reason,
    receiveCount: received.attributes?.ApproximateReceiveCount,
    waitSeconds: kind.backoffSeconds ? waitSeconds : undefined,
  });
  return 'retry';
};
