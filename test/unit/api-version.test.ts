import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiVersionNotice } from '../../shared/platforms/port.js';
import { watchApiVersion } from '../../shared/stores/connection.js';
import { dynamo } from './aws-mocks.js';

/** CONTRACT.md §12.4: the API version of every answer, shown on the store when it changes. */

const notice = (overrides: Partial<ApiVersionNotice> = {}): ApiVersionNotice => ({
  platform: 'storeplatform_b',
  shopDomain: 'shop.myshopify.com',
  requested: '2026-10',
  served: '2026-10',
  deprecatedReason: null,
  deprecated: false,
  ...overrides,
});

beforeEach(() => {
  dynamo.reset();
  dynamo.on(UpdateCommand).resolves({});
});

describe('watchApiVersion', () => {
  it('records the version on the store once, then again only when an answer says something new', async () => {
    const watch = watchApiVersion('source', 'sst_1');
    await watch(notice());
    await watch(notice());
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
    const [first] = dynamo.commandCalls(UpdateCommand);
    expect(first.args[0].input.Key).toEqual({ PK: 'SST#sst_1', SK: 'SST' });
    expect(first.args[0].input.ExpressionAttributeValues![':version']).toMatchObject({
      requested: '2026-10',
      served: '2026-10',
      deprecations: [],
    });

    await watch(notice({ served: '2027-01', deprecatedReason: 'Field `risk` is deprecated', deprecated: true }));
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
    expect(dynamo.commandCalls(UpdateCommand)[1].args[0].input.ExpressionAttributeValues![':version']).toMatchObject({
      requested: '2026-10',
      served: '2027-01',
      deprecations: ['Field `risk` is deprecated'],
    });
  });

  it('never fails the call when the write fails, and writes again at the next answer', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('throttled'));
    const watch = watchApiVersion('reseller', 'rst_2');
    await expect(watch(notice())).resolves.toBeUndefined();
    dynamo.on(UpdateCommand).resolves({});
    await watch(notice());
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it("writes nothing when the store's item says what the answer says (issue 44), and writes a change", async () => {
    const stored = { requested: '2026-10', served: '2026-10', deprecations: [], checkedAt: '2026-11-01T00:00:00.000Z' };
    const watch = watchApiVersion('source', 'sst_stored', stored);
    await watch(notice());
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
    await watch(notice({ served: '2027-01' }));
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(dynamo.commandCalls(UpdateCommand)[0].args[0].input.ExpressionAttributeValues![':version']).toMatchObject({
      served: '2027-01',
    });
  });

  it('writes nothing for a call that names no version (token refresh)', async () => {
    await watchApiVersion('reseller', 'rst_3')(notice({ requested: null, served: null }));
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});
