import { parseInput } from '../shared/core/validation.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSourceStore } from '../shared/http/present.js';
import { UpdateSourceStoreBody } from '../shared/http/schemas.js';
import { ok } from '../shared/http/types.js';
import { updateSourceStore } from '../shared/stores/source-stores.js';

export const handler = idempotentApiHandler(async ({ ownerId, path, body }) => {
  const { name, vendorTag, pricingMode, pricingConfig, serviceLevel } = parseInput(UpdateSourceStoreBody, body);
  const pricing = pricingMode && pricingConfig ? { pricingMode, pricingConfig } : undefined;
  return ok(
    presentSourceStore(
      await updateSourceStore({ ownerId }, path.rst_id, path.id, {
        name,
        vendorTag,
        pricing,
        serviceLevel,
      }),
    ),
  );
});
