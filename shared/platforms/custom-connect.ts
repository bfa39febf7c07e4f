/**
 * custom for staying connected (PLATFORM-API.md): the supplier's own endpoint has none of these calls.
 * A custom reseller store is judged on its webhooks alone, its subscriptions are `unmanaged` (it pushes),
 * its pushes are signed rather than tokened, and its orders take no tags (`tagged` stays null).
 */
import type { ConnectCalls } from './port.js';

export const customConnect: ConnectCalls = {
  readOrder: async () => ({ kind: 'unsupported' }),
  listWebhooks: async () => 'unmanaged',
  createWebhook: async () => 'unmanaged',
  refreshAccessToken: async () => 'unsupported',
  addOrderTags: async () => 'unsupported',
};
