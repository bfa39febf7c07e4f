import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { disconnectStore } from '../entities/store.js';
import type { AppTopicCall } from './topics.js';

/**
 * `app/uninstalled` (CONTRACT.md §12.2): each store of the shop domain that verified the call is
 * `uninstalled` from now on, so nothing calls it with its token; its jobs and fulfillments end `dead`
 * with `store_disconnected` until new credentials reconnect it. A redelivery changes nothing.
 */
export const uninstallShop = async (_deps: unknown, call: AppTopicCall) => {
  for (const store of call.stores) {
    if (await disconnectStore(store.kind, store.id, 'uninstalled', call.topic, call.receivedAt)) {
      countMetric(BUSINESS_METRICS.storesDisconnected);
      logger.warn('store uninstalled by its shop; it is no longer called', { storeId: store.id, kind: store.kind });
    }
  }
};
