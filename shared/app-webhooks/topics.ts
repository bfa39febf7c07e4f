import * as v from 'valibot';
import type { Deps } from '../aws/deps.js';
import type { AppWebhookStore } from '../entities/app-webhook.js';
import {
  type ComplianceTopic,
  type ComplianceWork,
  complianceWorkOf,
  doComplianceWork,
} from '../privacy/compliance.js';
import { uninstallShop } from './uninstall.js';

/** One verified call of an app topic, as its handler gets it (at once, or from the queue's worker). */
export interface AppTopicCall {
  topic: string;
  /** Lower-cased, as the stores hold it. */
  shopDomain: string;
  /** The stores of the shop domain (reseller and source, soft-deleted included) whose secret verified it. */
  stores: AppWebhookStore[];
  /** The signed body, parsed (integers past 2^53 as their digits); personal data: never log it. */
  payload: unknown;
  receivedAt: string;
  requestId: string;
}

/**
 * What a topic of `POST /v1/app/webhook` does. `now`: handled before the answer (quick, and the
 * platform retries a call that did not answer 200). `queued`: the call is kept (its body in
 * the table, never on the queue) and its id sent on the app-webhook queue, answered 200 at once; the
 * queue's worker runs `handle`, retried by SQS until it succeeds, then dead-lettered (durable work:
 * the compliance topics of CONTRACT.md §13). `handle` must be idempotent: a redelivery runs it again.
 */
export interface AppTopic {
  run: 'now' | 'queued';
  /** Checks the payload before the answer (a 400 naming the field, nothing kept); none: any JSON. */
  check?: (payload: unknown) => void;
  handle: (deps: Pick<Deps, 'cipher'>, call: AppTopicCall) => Promise<void>;
}

/**
 * A compliance topic (CONTRACT.md §13): queued, its work read from the payload as ids only
 * (shared/privacy/compliance.ts) and done to the end; a large shop's erasure goes on run after run.
 */
const compliance = (topic: ComplianceTopic): AppTopic => ({
  run: 'queued',
  check: (payload) => {
    complianceWorkOf(topic, '', [], payload);
  },
  handle: async (_deps, call) => {
    let work: ComplianceWork | undefined = complianceWorkOf(topic, call.shopDomain, call.stores, call.payload);
    while (work) work = await doComplianceWork(work);
  },
});

/**
 * The topics the route takes (CONTRACT.md §12.2, §13), one line each. A topic not listed answers 200
 * and does nothing: a platform that adds topics, or a subscription made by hand, must not see errors
 * (Shopify deletes a subscription that keeps failing).
 */
export const APP_TOPICS: Readonly<Record<string, AppTopic>> = {
  'app/uninstalled': { run: 'now', handle: uninstallShop },
  'customers/redact': compliance('customers/redact'),
  'shop/redact': compliance('shop/redact'),
  'customers/data_request': compliance('customers/data_request'),
};

/**
 * What every app webhook carries, as documented: each topic's handler reads its own fields (Shopify's
 * shapes), and the service keeps nothing else of it.
 */
export const AppWebhookPayload = v.looseObject({
  shop_domain: v.optional(v.pipe(v.string(), v.description('the shop the delivery is about'))),
});

/** The topics the route handles, for the OpenAPI document. */
export const appTopicNames = () => Object.keys(APP_TOPICS);
