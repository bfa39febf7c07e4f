import { cipher } from '../shared/aws/kms-cipher.js';
import { parseInput } from '../shared/core/errors.js';
import type { SourceStore } from '../shared/entities/store.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSourceStore } from '../shared/http/present.js';
import { UpdateSourceStoreBody } from '../shared/http/schemas.js';
import { adapterFor } from '../shared/platforms/adapters.js';
import { shopConnection } from '../shared/stores/connection.js';
import { updateSourceStore } from '../shared/stores/stores.js';

/** A promise without a zone takes the shop's own (CONTRACT.md §16.1). */
const shopTimeZone = async (store: SourceStore) => {
  const adapter = adapterFor(store.platform);
  if (!adapter.shopTimeZone) return null;
  return adapter.shopTimeZone(await shopConnection({ cipher, platforms: adapterFor }, store));
};

export const handler = idempotentApiHandler(async ({ ownerId, path, body }) => {
  const { name, vendorTag, pricingMode, pricingConfig, serviceLevel } = parseInput(UpdateSourceStoreBody, body);
  const pricing = pricingMode && pricingConfig ? { pricingMode, pricingConfig } : undefined;
  return ok(
    presentSourceStore(
      await updateSourceStore(
        { ownerId },
        path.rst_id,
        path.id,
        { name, vendorTag, pricing, serviceLevel },
        shopTimeZone,
      ),
    ),
  );
});
