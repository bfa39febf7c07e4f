import { SCOPES, SUBSCRIPTIONS, TOPIC_SCOPES } from '../../shared/stores/subscriptions';

describe('the Shopify access scopes the app asks for (PLATFORM-API.md, platform-notes)', () => {
  it('grants every topic a kind of store subscribes to one of the scopes it needs', () => {
    const lacking = (['reseller', 'source'] as const).flatMap((kind) =>
      SUBSCRIPTIONS[kind]
        .filter(({ topic }) => TOPIC_SCOPES[topic].length > 0)
        .filter(({ topic }) => !TOPIC_SCOPES[topic].some((scope) => SCOPES[kind].includes(scope)))
        .map(({ topic }) => `${kind} ${topic}`),
    );
    expect(lacking).toEqual([]);
  });

  it('asks suppliers for read_fulfillments, which fulfillment_events/create needs (CONTRACT.md §16.2)', () => {
    expect(SUBSCRIPTIONS.source.map(({ topic }) => topic)).toContain('fulfillment_events/create');
    expect(TOPIC_SCOPES['fulfillment_events/create']).toEqual(['read_fulfillments']);
    expect(SCOPES.source).toContain('read_fulfillments');
    // The deadline's mutation (§16.1) takes a write scope of the fulfillment orders' kind.
    expect(SCOPES.source).toEqual(
      expect.arrayContaining(['write_merchant_managed_fulfillment_orders', 'write_third_party_fulfillment_orders']),
    );
  });
});
