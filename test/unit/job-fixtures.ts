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

/**
 * What the unit suites' stored stores share: owner_a's store on `platform` at `shopDomain`, made on
 * 2026-11-01, its token and secret ciphertexts that the mocked KMS decrypts to `plain-<field>`.
 */
export const storeFields = (platform: string, shopDomain: string) => ({
  ownerId: 'owner_a',
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  deletedAt: null,
  platform,
  shopDomain,
  accessToken: Buffer.from('cipher-token').toString('base64'),
  webhookSecret: Buffer.from('cipher-secret').toString('base64'),
});
