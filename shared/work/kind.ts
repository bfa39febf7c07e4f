import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import type { SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import type { WorkMessage } from './message.js';

/**
 * One try of a claimed work item: its message, the item as the claim left it, the message as SQS
 * handed it over (`received`) and when the try began. `retry` hands it back to the runner's failure path (the item
 * `failed`, the message back after its backoff), for a kind that finds, in its own logic, a reason
 * to try again later.
 */
export interface Attempt<M extends WorkMessage, I> {
  message: M;
  item: I;
  received: SQSRecord;
  startedAt: string;
  /** A message SQS delivers again is a redelivery, whatever first sent it. */
  redelivered: boolean;
  retry: (reason: string, platformStatus: number | null) => Promise<MessageOutcome>;
  /**
   * Hands the item back to the runner until `slotAt` (epoch ms), the call slot its supplier's pace
   * gave it: no try is counted, the throttling budget is untouched (slot-wait.ts).
   */
  waitForSlot: (slotAt: number) => Promise<MessageOutcome>;
}

/**
 * How an end the runner asked for went, for its log line (`dead`, `found`, `moved`…); `unknown` when
 * the platform could not be asked whether an earlier try made it: the item then fails and comes back.
 */
export type EndOutcome = 'unknown' | (string & {});

/** The log lines a kind writes in its own words (integration tests and dashboards read some of them). */
export interface WorkWords {
  /** What one item is called: `sync job`, `fulfillment`. */
  item: string;
  /** Its queue's name: `sync`, `fulfillment`. */
  queue: string;
  refused: string;
  /** How a refusal is logged: `warn` (default), or `info` for a kind whose refusals are expected (a tag). */
  refusedLevel?: 'info' | 'warn';
  throttledPastBudget: string;
  deferred: string;
}

/**
 * A work-item kind (a sync job, a fulfillment entry's propagation, later a tag or an event delivery):
 * what the runner (runner.ts) cannot know. Its message, its log attributes, the platform call and
 * what completes it, and the moves of its item, each a small adapter over the item's own module, so
 * that a change of how an item is stored changes only its adapters. The runner owns the rest:
 * parsing, the early re-send, the claim, the 429 deferral within THROTTLE_BUDGET_SECONDS, failure with
 * backoff, the end on a refusal, and every log line about them. `D`: what its calls need (a platform's
 * adapters, a webhook sender).
 */
export interface WorkKind<M extends WorkMessage, I, D = Deps> {
  words: WorkWords;
  queueUrl: () => string;
  parse: (body: string) => M | undefined;
  /** What its message tells the log lines, before anything is read. */
  messageContext: (message: M) => LogAttributes;
  /** What the item adds to them once claimed. */
  itemContext: (item: I) => LogAttributes;
  /** A message that is not a try of its item (a change of a placed order, say): the kind's alone. */
  divert?: (deps: D, message: M) => Promise<MessageOutcome> | undefined;
  /** The item, claimed for this try; undefined for a stale message (or nothing left to do). */
  claim: (message: M) => Promise<I | undefined>;
  startedAt: (item: I) => string;
  /** The kind's own logic: the platform call and what completes the item. May throw: the runner classifies it. */
  attempt: (deps: D, attempt: Attempt<M, I>) => Promise<MessageOutcome>;
  /** The reason an internal error (not the platform's answer) records: never its text. */
  internalReason: string;
  /** When its current run of 429s began, if it is in one. */
  throttledSince: (item: I) => string | undefined;
  /** Ends the item (`dead`) on a refusal or a spent throttling budget; `status`: the platform's. */
  end: (deps: D, attempt: Attempt<M, I>, reason: string, status: number | null) => Promise<EndOutcome>;
  /**
   * Defers the item after a 429 (`error`, for what the kind learns of it: its supplier's pace);
   * answers the message to send it, or undefined if it moved meanwhile.
   */
  defer: (attempt: Attempt<M, I>, delaySeconds: number, reason: string, error: unknown) => Promise<M | undefined>;
  /**
   * Puts the item back before its call, for `delaySeconds` (its supplier's pace had no slot sooner):
   * like `defer` under a new generation, but neither a try nor a throttled run. Answers the message to
   * send it, or undefined if it moved meanwhile. Absent: the kind never waits for a slot.
   */
  waitForSlot?: (attempt: Attempt<M, I>, delaySeconds: number) => Promise<M | undefined>;
  /** Records a failed try, which waits `waitSeconds` (0: the queue's own visibility). */
  fail: (attempt: Attempt<M, I>, reason: string, status: number | null, waitSeconds: number) => Promise<unknown>;
  /**
   * The wait after each failed receive (the last repeating), given as the message's visibility;
   * absent, a failed message comes back on the queue's own visibility timeout.
   */
  backoffSeconds?: () => number[];
  /**
   * The request left and no usable answer came back: the kind may look for what it made. Answers
   * undefined when that settled the item, or the reason to fail with. Absent: a transient failure.
   */
  unknownOutcome?: (
    deps: D,
    attempt: Attempt<M, I>,
    reason: string,
    status: number | null,
  ) => Promise<string | undefined>;
}
