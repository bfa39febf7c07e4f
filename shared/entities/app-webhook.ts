import { keys } from '../dynamo/keys.js';
import { deleteItem, getItem, type Item, putIf, recordShape } from '../dynamo/table.js';
import type { StoreKind } from './store.js';

/** A store a verified app webhook named: what its topic's handler needs to find it again. */
export interface AppWebhookStore {
  kind: StoreKind;
  id: string;
  ownerId: string;
  /** The source store's reseller store; null for a reseller store. */
  resellerStoreId: string | null;
  deletedAt: string | null;
}

/**
 * The app webhook entity: a verified delivery of a topic the app-webhook queue's worker handles
 * (shared/app-webhooks/topics.ts says which), kept until it is handled. Its body may hold a
 * shopper's personal data (a `customers/redact` names a customer): it stays in this item, never in
 * the queue message (which names the item) nor in a log line, and the item goes once handled (or
 * with the table's TTL).
 */
export interface AppWebhook {
  id: string;
  topic: string;
  shopDomain: string;
  /** The stores of the shop domain whose webhook secret verified the delivery. */
  stores: AppWebhookStore[];
  /** The signed body, as received (UTF-8). */
  body: string;
  receivedAt: string;
  requestId: string;
  /** Epoch seconds: the table's TTL attribute. */
  expiresAt: number;
}

const shape = recordShape<AppWebhook>()('app webhook', {
  strings: ['id', 'topic', 'shopDomain', 'body', 'receivedAt', 'requestId'],
  numbers: ['expiresAt'],
  objects: ['stores'],
});

export const appWebhookItem = (hook: AppWebhook): Item => ({ ...keys.appWebhook(hook.id), ...shape.fields(hook) });

export const appWebhookFrom = shape.from;

// ---------- reads and writes of the app webhooks

/**
 * Keeps a delivery to be handled; one already kept under its id (a redelivery, or a try whose
 * message was not sent) is left as it is: true either way, the caller then sends its message.
 */
export const keepAppWebhook = async (hook: AppWebhook) => {
  await putIf(appWebhookItem(hook));
  return true;
};

/** The kept delivery, read consistently; undefined once handled. */
export const readAppWebhook = (id: string) => getItem(keys.appWebhook(id), appWebhookFrom, true);

/** Handled: the delivery and the personal data its body may hold go. */
export const forgetAppWebhook = (id: string) => deleteItem(keys.appWebhook(id));
