/**
 * What the unit suites' sync jobs share: owner_a's job for rst_1's order 5551234 to sst_1, in `status`
 * after `attempts` tries, of generation 1. Each suite adds its keys, times and order.
 */
export const jobFields = (status = 'pending', attempts = 0) => ({
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  sourceStoreId: 'sst_1',
  status,
  attempts,
  generation: 1,
  externalOrderId: '5551234',
});
