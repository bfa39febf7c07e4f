/**
 * storeplatform_b's calls for staying connected (PLATFORM-API.md, "Staying connected"), on Shopify's
 * Admin GraphQL API: `order(id)` before it goes, `webhookSubscriptions` and `webhookSubscriptionCreate`,
 * token refresh and `tagsAdd`. Built on the adapter's own runner (`ShopifyRunner`, handed over by
 * storeplatform-b.ts), so every call is classified as the adapter's others are, and this module imports
 * nothing of it at run time.
 */

import { refreshAccessToken, unexpectedAnswer } from './http.js';
import {
  type ChangedOrder,
  type ConnectCalls,
  orderGid,
  restOrderId,
  type ShopConnection,
  type WebhookSubscription,
} from './port.js';
import { financialStatusOf, isObject, objects, riskOf } from './rest.js';
import { SHOPIFY_PAGE_SIZES as PAGE, type ShopifyDocumentName } from './storeplatform-b-documents.js';

const PLATFORM = 'storeplatform_b';

type Json = Record<string, unknown>;

/** What storeplatform-b.ts lends: one document run, a mutation, an order node made whole, pages, the REST shape. */
export interface ShopifyRunner {
  run(shop: ShopConnection, name: ShopifyDocumentName, variables: Json): Promise<Json>;
  mutate(shop: ShopConnection, name: ShopifyDocumentName, variables: Json): Promise<Json>;
  wholeOrderNode(shop: ShopConnection, node: Json): Promise<Json>;
  allNodes(connection: unknown, next: (after: string) => Promise<unknown>): Promise<Json[]>;
  changedOrderOfNode(node: Json): ChangedOrder | undefined;
}

/** `orders/create` ↔ `ORDERS_CREATE`: Shopify's enum spells the REST topic in capitals, `/` as `_`. */
export const shopifyTopic = (topic: string) => topic.replace('/', '_').toUpperCase();
/** `ORDERS_CREATE` → `orders/create`: the last `_` is the `/` (so `order_transactions/create` too). */
export const restTopic = (topic: string) => topic.toLowerCase().replace(/_([^_]*)$/, '/$1');

const subscriptionOf = (node: Json): WebhookSubscription | undefined =>
  typeof node.id === 'string' && typeof node.topic === 'string' && typeof node.uri === 'string'
    ? { id: node.id, topic: restTopic(node.topic), address: node.uri }
    : undefined;

/** Shopify's shipping lines as REST `shipping_lines` (`title`, `price`). */
const restShippingLines = (connection: unknown) =>
  objects(isObject(connection) ? connection.nodes : undefined).map((line) => {
    const price = isObject(line.originalPriceSet) ? line.originalPriceSet.shopMoney : undefined;
    return { title: line.title ?? null, price: isObject(price) ? (price.amount ?? null) : null };
  });

/** The order read before it goes; `not_found` for `order: null`. */
async function readOrder(runner: ShopifyRunner, shop: ShopConnection, orderId: string) {
  const id = orderGid(restOrderId(orderId));
  const variables = { id, lines: PAGE.releaseLines, shippingLines: PAGE.releaseShippingLines };
  const data = await runner.run(shop, 'orderBeforeRelease', variables);
  if (data.order === null || data.order === undefined) return { kind: 'not_found' as const };
  if (!isObject(data.order)) throw unexpectedAnswer(PLATFORM, 200, 'an order that is not an object');
  const node = data.order;
  const changed = runner.changedOrderOfNode(await runner.wholeOrderNode(shop, node));
  if (!changed) throw unexpectedAnswer(PLATFORM, 200, 'an order without an id or updatedAt');
  const financialStatus = financialStatusOf(node.displayFinancialStatus);
  const test = node.test === true;
  const payload = {
    ...changed.payload,
    financial_status: financialStatus,
    test,
    shipping_lines: restShippingLines(node.shippingLines),
  };
  const risk = riskOf(isObject(node.risk) ? node.risk.recommendation : undefined);
  const cancelledAt = typeof node.cancelledAt === 'string' ? node.cancelledAt : null;
  const order = { financialStatus, riskRecommendation: risk, test, cancelledAt, updatedAt: changed.updatedAt, payload };
  return { kind: 'found' as const, order };
}

async function listWebhooks(runner: ShopifyRunner, shop: ShopConnection): Promise<WebhookSubscription[]> {
  const page = async (after?: string) => {
    const data = await runner.run(shop, 'webhookSubscriptions', { first: PAGE.webhookSubscriptions, after });
    if (!isObject(data.webhookSubscriptions)) throw unexpectedAnswer(PLATFORM, 200, 'no webhookSubscriptions');
    return data.webhookSubscriptions;
  };
  const nodes = await runner.allNodes(await page(), page);
  const subscriptions = nodes.flatMap((node) => subscriptionOf(node) ?? []);
  if (subscriptions.length !== nodes.length) throw unexpectedAnswer(PLATFORM, 200, 'a subscription without id or uri');
  return subscriptions;
}

async function createWebhook(runner: ShopifyRunner, shop: ShopConnection, topic: string, address: string) {
  const payload = await runner.mutate(shop, 'webhookSubscriptionCreate', {
    topic: shopifyTopic(topic),
    webhookSubscription: { uri: address },
  });
  const created = isObject(payload.webhookSubscription) ? subscriptionOf(payload.webhookSubscription) : undefined;
  if (!created) throw unexpectedAnswer(PLATFORM, 200, 'no webhookSubscription');
  return created;
}

/** storeplatform_b's calls of staying connected, run by the adapter's runner. */
export const storePlatformBConnect = (runner: ShopifyRunner): ConnectCalls => ({
  readOrder: (shop, orderId) => readOrder(runner, shop, orderId),
  listWebhooks: (shop) => listWebhooks(runner, shop),
  createWebhook: (shop, topic, address) => createWebhook(runner, shop, topic, address),
  refreshAccessToken: (shop, grant) => refreshAccessToken(PLATFORM, shop, grant),
  async addOrderTags(shop, orderId, tags) {
    await runner.mutate(shop, 'tagsAdd', { id: orderGid(restOrderId(orderId)), tags });
    return 'tagged';
  },
});
