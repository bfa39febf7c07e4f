import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { kmsCipher } from '../../shared/aws/kms-cipher.js';
import { withFreshTokens } from '../../shared/platforms/adapters.js';
import { PlatformError, RefreshRefusedError } from '../../shared/platforms/http.js';
import type { PlatformAdapter, RefreshedToken, RefreshGrant, TokenKeeper } from '../../shared/platforms/port.js';
import { isAboutToExpire, tokenKeeper } from '../../shared/stores/connection.js';
import { dynamo, kms } from './aws-mocks.js';
import { fakeDeps } from './fake-deps.js';

/**
 * The refresh of expiring tokens (CONTRACT.md §12.3, shared/stores/connection.ts): the lease on
 * the store's item, taken and ended by conditional writes. DynamoDB is mocked with aws-sdk-client-mock
 * over one item whose conditions are evaluated as DynamoDB would (the few the module writes), so
 * workers racing on it are workers racing on a table; KMS "encrypts" as `ct:<plaintext>`.
 */

type Row = Record<string, unknown>;
let row: Row;

const ct = (plain: string) => Buffer.from(`ct:${plain}`).toString('base64');
const plainOf = (ciphertext: string) => Buffer.from(ciphertext, 'base64').toString().slice(3);

/** The conditions the keeper's writes carry, evaluated over `row`. */
const holds = (condition: string, values: Record<string, unknown>) => {
  const leaseFree = row.refreshLeaseUntil === undefined || String(row.refreshLeaseUntil) < String(values[':now']);
  switch (condition) {
    case 'attribute_exists(PK) AND accessToken = :token AND attribute_exists(refreshToken) AND ' +
      '(attribute_not_exists(refreshLeaseUntil) OR refreshLeaseUntil < :now)':
      return (
        row.PK !== undefined && row.accessToken === values[':token'] && row.refreshToken !== undefined && leaseFree
      );
    case 'refreshLeaseHolder = :holder AND refreshToken = :spent':
      return row.refreshLeaseHolder === values[':holder'] && row.refreshToken === values[':spent'];
    case 'refreshLeaseHolder = :holder':
      return row.refreshLeaseHolder === values[':holder'];
    default:
      throw new Error(`a condition the fake does not know: ${condition}`);
  }
};

/** `SET a = :a, b = :b REMOVE c, d` applied to `row`. */
const apply = (expression: string, values: Record<string, unknown>) => {
  const [, sets = '', removes = ''] = /^(?:SET (.*?))?\s*(?:REMOVE (.*))?$/.exec(expression.trim()) ?? [];
  for (const part of sets.split(',').filter((s) => s.trim())) {
    const [name, value] = part.split('=').map((s) => s.trim());
    row[name] = values[value];
  }
  for (const name of removes
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean))
    delete row[name];
};

const conditionFailed = () =>
  Object.assign(new Error('The conditional request failed'), {
    name: 'ConditionalCheckFailedException',
    Item: { ...row },
  });

const updates: UpdateCommandInput[] = [];

beforeEach(() => {
  dynamo.reset();
  kms.reset();
  updates.length = 0;
  row = {
    PK: 'SST#sst_1',
    SK: 'SST',
    accessToken: ct('at_1'),
    refreshToken: ct('rt_1'),
    clientId: ct('client'),
    clientSecret: ct('secret'),
    tokenExpiresAt: new Date(Date.now() + 100).toISOString(),
    tokenIssuedAt: new Date(Date.now() - 2_900).toISOString(),
    deletedAt: null,
  };
  dynamo.on(GetCommand).callsFake(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return { Item: { ...row } };
  });
  dynamo.on(UpdateCommand).callsFake(async (input: UpdateCommandInput) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    updates.push(input);
    const values = input.ExpressionAttributeValues ?? {};
    if (input.ConditionExpression && !holds(input.ConditionExpression, values)) throw conditionFailed();
    apply(input.UpdateExpression!, values);
    return {};
  });
  kms.on(EncryptCommand).callsFake((input) => ({
    CiphertextBlob: Buffer.from(`ct:${Buffer.from(input.Plaintext).toString()}`),
  }));
  kms.on(DecryptCommand).callsFake((input) => ({ Plaintext: Buffer.from(input.CiphertextBlob).subarray(3) }));
});

const STORE = {
  id: 'sst_1',
  platform: 'storeplatform_b' as const,
  shopDomain: 'supplier.example',
  secrets: {
    accessToken: '',
    webhookSecret: ct('whsec'),
    refresh: { refreshToken: '', clientId: '', clientSecret: '' },
  },
};

/** A worker's keeper over the store as it read it (the row now, unless `stale` is given). */
const keeperOf = (
  refresh: (shop: unknown, grant: RefreshGrant) => Promise<RefreshedToken | 'unsupported'>,
  stale?: Row,
) => {
  const read = stale ?? row;
  const deps = { ...fakeDeps({ refreshAccessToken: refresh }), cipher: kmsCipher(new KMSClient({}), () => 'key') };
  const store = {
    ...STORE,
    secrets: { ...STORE.secrets, accessToken: String(read.accessToken) },
    tokenLife: { tokenExpiresAt: String(read.tokenExpiresAt), tokenIssuedAt: String(read.tokenIssuedAt) },
  };
  const keeper = tokenKeeper(deps, 'source', store, plainOf(String(read.accessToken)));
  if (!keeper) throw new Error('no keeper');
  return keeper;
};

let issued = 1;
/** A platform that refreshes as Shopify does: a new pair, 3-second tokens. */
const refreshing = jest.fn(async (_shop: unknown, grant: RefreshGrant): Promise<RefreshedToken> => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  issued += 1;
  expect(grant).toEqual({
    refreshToken: plainOf(String(row.refreshToken)),
    clientId: 'client',
    clientSecret: 'secret',
  });
  return {
    accessToken: `at_${issued}`,
    refreshToken: `rt_${issued}`,
    accessTokenExpiresAt: new Date(Date.now() + 3_000).toISOString(),
    refreshTokenExpiresAt: null,
    scope: null,
  };
});

beforeEach(() => {
  issued = 1;
  refreshing.mockClear();
});

describe('when a token is about to expire', () => {
  it('is in the last tenth of its life, at most 5 minutes; a token without expiry never is', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const threeSeconds = { tokenIssuedAt: at(0), tokenExpiresAt: at(3_000) };
    expect(isAboutToExpire(threeSeconds, 2_600)).toBe(false);
    expect(isAboutToExpire(threeSeconds, 2_700)).toBe(true);
    expect(isAboutToExpire(threeSeconds, 9_000)).toBe(true);
    const hour = { tokenIssuedAt: at(0), tokenExpiresAt: at(3_600_000) };
    expect(isAboutToExpire(hour, 3_600_000 - 300_001)).toBe(false);
    expect(isAboutToExpire(hour, 3_600_000 - 300_000)).toBe(true);
    expect(isAboutToExpire({ tokenIssuedAt: null, tokenExpiresAt: null }, 1e15)).toBe(false);
  });
});

describe('the token keeper', () => {
  it('hands a fresh token as it is: no read, no write, no refresh', async () => {
    row.tokenExpiresAt = new Date(Date.now() + 60_000).toISOString();
    row.tokenIssuedAt = new Date().toISOString();
    await expect(keeperOf(refreshing).current()).resolves.toBe('at_1');
    expect(dynamo.calls()).toHaveLength(0);
    expect(refreshing).not.toHaveBeenCalled();
  });

  it('refreshes a token about to expire under a lease, and stores the pair and expiry in one write', async () => {
    await expect(keeperOf(refreshing).current()).resolves.toBe('at_2');
    expect(refreshing).toHaveBeenCalledTimes(1);
    const [take, record] = updates;
    expect(take.ConditionExpression).toContain('accessToken = :token');
    expect(take.ExpressionAttributeValues?.[':token']).toBe(ct('at_1'));
    expect(record.UpdateExpression).toMatch(
      /^SET accessToken = :accessToken, refreshToken = :refreshToken, tokenExpiresAt/,
    );
    expect(record.ConditionExpression).toBe('refreshLeaseHolder = :holder AND refreshToken = :spent');
    expect(updates).toHaveLength(2);
    expect(row).toMatchObject({ accessToken: ct('at_2'), refreshToken: ct('rt_2') });
    expect(row.refreshLeaseHolder).toBeUndefined();
    expect(Date.parse(String(row.tokenExpiresAt))).toBeGreaterThan(Date.now() + 2_000);
  });

  it('refreshes once however many workers need it at the same time: the others use its token', async () => {
    const workers = Array.from({ length: 8 }, () => keeperOf(refreshing));
    const tokens = await Promise.all(workers.map((keeper) => keeper.current()));
    expect(refreshing).toHaveBeenCalledTimes(1);
    expect(new Set(tokens)).toEqual(new Set(['at_2']));
  });

  it('uses the token another worker refreshed, without a refresh, when its own read was stale', async () => {
    const stale = { ...row };
    await keeperOf(refreshing).current();
    const late = keeperOf(refreshing, stale);
    await expect(late.current()).resolves.toBe('at_2');
    expect(refreshing).toHaveBeenCalledTimes(1);
  });

  it('after a 401 refreshes a token it thought fresh, once; the old one refused again gets the new', async () => {
    row.tokenExpiresAt = new Date(Date.now() + 60_000).toISOString();
    row.tokenIssuedAt = new Date().toISOString();
    const keeper = keeperOf(refreshing);
    await expect(keeper.afterUnauthorized('at_1')).resolves.toBe('at_2');
    await expect(keeper.afterUnauthorized('at_1')).resolves.toBe('at_2');
    expect(refreshing).toHaveBeenCalledTimes(1);
  });

  it('refreshes a token another worker wrote when it is itself about to expire', async () => {
    const stale = { ...row };
    Object.assign(row, { accessToken: ct('at_other'), refreshToken: ct('rt_other') });
    await expect(keeperOf(refreshing, stale).current()).resolves.toBe('at_2');
    expect(refreshing).toHaveBeenCalledTimes(1);
    expect(refreshing.mock.calls[0][1].refreshToken).toBe('rt_other');
  });

  it('tells a token stale once replaced or about to expire', async () => {
    const keeper = keeperOf(refreshing);
    expect(keeper.isStale('at_1')).toBe(true);
    await keeper.current();
    expect(keeper.isStale('at_1')).toBe(true);
    expect(keeper.isStale('at_2')).toBe(false);
  });

  it('waits for a lease in force, then uses the token its holder wrote', async () => {
    row.refreshLeaseHolder = 'another';
    row.refreshLeaseUntil = new Date(Date.now() + 10_000).toISOString();
    setTimeout(() => {
      const now = Date.now();
      Object.assign(row, {
        accessToken: ct('at_9'),
        refreshToken: ct('rt_9'),
        tokenExpiresAt: new Date(now + 3_000).toISOString(),
        tokenIssuedAt: new Date(now).toISOString(),
      });
      delete row.refreshLeaseHolder;
      delete row.refreshLeaseUntil;
    }, 120);
    await expect(keeperOf(refreshing).current()).resolves.toBe('at_9');
    expect(refreshing).not.toHaveBeenCalled();
  });

  it('takes over a lease that lapsed (its holder died)', async () => {
    row.refreshLeaseHolder = 'dead';
    row.refreshLeaseUntil = new Date(Date.now() - 1).toISOString();
    await expect(keeperOf(refreshing).current()).resolves.toBe('at_2');
    expect(refreshing).toHaveBeenCalledTimes(1);
  });

  it('loses nothing to a rotation racing the refresh: its credentials stay, the refreshed pair goes', async () => {
    const rotating = jest.fn(async (shop: unknown, grant: RefreshGrant) => {
      // New credentials by the API while the refresh is under way (secretsRotation removes the lease).
      Object.assign(row, { accessToken: ct('at_rotated'), refreshToken: ct('rt_rotated') });
      // New credentials without an expiry: the token does not expire (secretsRotation removes the old life).
      for (const name of ['refreshLeaseHolder', 'refreshLeaseUntil', 'tokenExpiresAt', 'tokenIssuedAt'])
        delete row[name];
      return refreshing(shop, { ...grant, refreshToken: 'rt_rotated' });
    });
    await expect(keeperOf(rotating).current()).resolves.toBe('at_rotated');
    expect(row).toMatchObject({ accessToken: ct('at_rotated'), refreshToken: ct('rt_rotated') });
    expect(rotating).toHaveBeenCalledTimes(1);
  });

  it('makes the store reauthorization_required on a refused refresh; the call fails store_disconnected', async () => {
    const refused = jest.fn(async () => {
      throw new RefreshRefusedError('storeplatform_b', 400, 'invalid_grant');
    });
    const failure = await keeperOf(refused)
      .current()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PlatformError);
    expect(failure).toMatchObject({ status: 401, retryable: false });
    expect((failure as Error).message).toMatch(/^store_disconnected: source store sst_1 is reauthorization_required/);
    expect(row).toMatchObject({
      connectionState: 'reauthorization_required',
      connectionReason: 'token refresh refused: invalid_grant',
    });
    expect(row.refreshLeaseHolder).toBeUndefined();
    // A later worker does not try again: the store is disconnected.
    await expect(keeperOf(refreshing).current()).rejects.toThrow(/^store_disconnected/);
    expect(refreshing).not.toHaveBeenCalled();
    expect(JSON.stringify(failure) + (failure as Error).message).not.toMatch(/rt_1|secret|client/);
  });

  it('ends its lease when the refresh fails in a way that may heal, and fails the call retryable', async () => {
    const down = jest.fn(async () => {
      throw new PlatformError({ platform: 'storeplatform_b', status: 503, retryable: true, message: 'down' });
    });
    await expect(keeperOf(down).current()).rejects.toMatchObject({ status: 503, retryable: true });
    expect(row.refreshLeaseHolder).toBeUndefined();
    expect(row.accessToken).toBe(ct('at_1'));
    await expect(keeperOf(refreshing).current()).resolves.toBe('at_2');
  });

  it('keeps no token for a store without a refresh grant, nor for custom', () => {
    const deps = fakeDeps();
    expect(
      tokenKeeper(deps, 'source', { ...STORE, secrets: { accessToken: 'x', webhookSecret: 'y' } }, 'x'),
    ).toBeUndefined();
    expect(tokenKeeper(deps, 'source', { ...STORE, platform: 'custom' }, 'x')).toBeUndefined();
  });
});

describe('the adapters with fresh tokens', () => {
  const unauthorized = new PlatformError({
    platform: 'storeplatform_b',
    status: 401,
    retryable: false,
    message: '401',
  });
  const adapterWith = (createOrder: jest.Mock) =>
    withFreshTokens(fakeDeps({ createOrder }).platforms() as PlatformAdapter);
  const shop = (
    tokens?: Omit<TokenKeeper, 'isStale'> & { isStale?: TokenKeeper['isStale'] },
  ): Parameters<PlatformAdapter['createOrder']>[0] => ({
    platform: 'storeplatform_b' as const,
    shopDomain: 'supplier.example',
    accessToken: 'at_read',
    webhookSecret: '',
    ...(tokens ? { tokens: { isStale: () => false, ...tokens } } : {}),
  });
  const order = {} as Parameters<PlatformAdapter['createOrder']>[1];

  it('calls with the keeper’s token, and once more with a newer one after a 401', async () => {
    const createOrder = jest.fn().mockRejectedValueOnce(unauthorized).mockResolvedValueOnce({ orderId: '7' });
    const afterUnauthorized = jest.fn(async () => 'at_new');
    const out = await adapterWith(createOrder).createOrder(
      shop({ current: async () => 'at_current', afterUnauthorized }),
      order,
      'sj_1',
    );
    expect(out).toEqual({ orderId: '7' });
    expect(createOrder.mock.calls.map(([called]) => called.accessToken)).toEqual(['at_current', 'at_new']);
    expect(afterUnauthorized).toHaveBeenCalledWith('at_current');
  });

  it('lets a second 401, a 401 with nothing newer, and any other failure stand', async () => {
    const twice = jest.fn().mockRejectedValue(unauthorized);
    const keeper = { current: async () => 'a', afterUnauthorized: async () => 'b' };
    await expect(adapterWith(twice).createOrder(shop(keeper), order, 'k')).rejects.toBe(unauthorized);
    expect(twice).toHaveBeenCalledTimes(2);
    const none = jest.fn().mockRejectedValue(unauthorized);
    await expect(
      adapterWith(none).createOrder(
        shop({ current: async () => 'a', afterUnauthorized: async () => null }),
        order,
        'k',
      ),
    ).rejects.toBe(unauthorized);
    expect(none).toHaveBeenCalledTimes(1);
    const other = new PlatformError({ platform: 'storeplatform_b', status: 422, retryable: false, message: '422' });
    const refused = jest.fn().mockRejectedValue(other);
    await expect(adapterWith(refused).createOrder(shop(keeper), order, 'k')).rejects.toBe(other);
    expect(refused).toHaveBeenCalledTimes(1);
  });

  it('makes a second 401 retryable when its token expired during the call', async () => {
    const twice = jest.fn().mockRejectedValue(unauthorized);
    const keeper = { current: async () => 'a', afterUnauthorized: async () => 'b', isStale: (t: string) => t === 'b' };
    await expect(adapterWith(twice).createOrder(shop(keeper), order, 'k')).rejects.toMatchObject({
      status: 401,
      retryable: true,
    });
    expect(twice).toHaveBeenCalledTimes(2);
  });

  it('calls a shop without a keeper with its token as it is', async () => {
    const createOrder = jest.fn().mockResolvedValue({ orderId: '1' });
    await adapterWith(createOrder).createOrder(shop(), order, 'k');
    expect(createOrder.mock.calls[0][0].accessToken).toBe('at_read');
  });
});
