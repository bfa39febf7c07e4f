import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { resellerStoreKey } from '../../shared/entities/store.js';
import { createResellerStore, createSourceStore, loggedServiceForSuite, unique } from './support.js';
import { orderPayload, sendWebhook, jobReaches as waitForJob } from './webhooks.js';

jest.setTimeout(60_000);

/**
 * Stores that can change (CONTRACT.md §10.9): a source store's name, vendor tag and pricing, and new
 * credentials for either kind of store, the replaced webhook secret verifying for 24 hours. Through
 * the local runtime, against DynamoDB Local, the KMS stand-in and the simulator.
 */
describe('stores that can change', () => {
  const { service, log, api, sim } = loggedServiceForSuite();
  const jobReaches = (id: string, status: string) => waitForJob(api(), id, status);

  const order = (shopDomain: string, secret: string, vendor: string, price = '13.00') =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain,
      secret,
      body: orderPayload([{ vendor, price }]),
    });

  describe('PATCH /v1/reseller_stores/{rst_id}/source_stores/{id}', () => {
    it('renames, retags and reprices: later orders use the new values, the old tag routes nowhere', async () => {
      const secret = unique('whsec');
      const reseller = await createResellerStore(api(), { webhookSecret: secret });
      const source = await createSourceStore(api(), reseller.id, { vendorTag: 'Old' });
      const path = `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`;

      const res = await api().patch(path, {
        name: 'Renamed',
        vendorTag: 'New',
        pricingMode: 'field_rules',
        pricingConfig: { type: 'field_rules', productCost: 3, shippingCost: 2 },
      });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: source.id,
        object: 'source_store',
        name: 'Renamed',
        vendorTag: 'New',
        pricingMode: 'field_rules',
        pricingConfig: { type: 'field_rules', productCost: 3, shippingCost: 2 },
      });
      expect((await api().get(path)).body).toMatchObject({ name: 'Renamed', vendorTag: 'New' });
      expect((await order(reseller.shopDomain, secret, 'Old')).body.syncJobIds).toEqual([]);
      const [id] = (await order(reseller.shopDomain, secret, 'New')).body.syncJobIds;
      await jobReaches(id, 'completed');
      const [placed] = await sim().orders(source.shopDomain);
      expect(placed.line_items[0].price).toBe('10.00');
      expect(placed.shipping_lines[0].price).toBe('3.00');
    });

    it('answers 409 vendor_tag_conflict for a tag another active store holds, and changes nothing', async () => {
      const reseller = await createResellerStore(api());
      const a = await createSourceStore(api(), reseller.id, { vendorTag: 'A' });
      await createSourceStore(api(), reseller.id, { vendorTag: 'B' });
      const path = `/v1/reseller_stores/${reseller.id}/source_stores/${a.id}`;

      const res = await api().patch(path, { vendorTag: 'B' });

      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'vendor_tag_conflict' });
      expect((await api().get(path)).body.vendorTag).toBe('A');
      // The store keeps its own tag: it can be set to what it already is.
      expect((await api().patch(path, { vendorTag: 'A', name: 'Same tag' })).status).toBe(200);
    });

    it.each([
      ['pricingMode without its config', { pricingMode: 'percentage' }, 'pricingMode'],
      [
        'a config of another mode',
        { pricingMode: 'percentage', pricingConfig: { type: 'field_rules', productCost: 1, shippingCost: 1 } },
        'pricingConfig.type',
      ],
      ['a secret', { accessToken: 'tok' }, undefined],
    ])('refuses %s with 400 validation_failed', async (_, body, param) => {
      const reseller = await createResellerStore(api());
      const source = await createSourceStore(api(), reseller.id);

      const res = await api().patch(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`, body);

      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      if (param) expect(res.body.error.param).toBe(param);
    });

    it('answers 404 for another owner’s store', async () => {
      const reseller = await createResellerStore(api());
      const source = await createSourceStore(api(), reseller.id);
      const res = await service
        .api('owner_b')
        .patch(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`, { name: 'Mine' });
      expect(res.status).toBe(404);
    });
  });

  describe('POST …/credentials', () => {
    it('gives a source store a new access token: the next attempt uses it; audited, no secret anywhere', async () => {
      const secret = unique('whsec');
      const reseller = await createResellerStore(api(), { webhookSecret: secret });
      const source = await createSourceStore(api(), reseller.id, { vendorTag: 'Revoked', accessToken: 'tok_fail401' });
      const [id] = (await order(reseller.shopDomain, secret, 'Revoked')).body.syncJobIds;
      await jobReaches(id, 'dead');
      const newToken = unique('shpat_rotated');

      const res = await api().post(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/credentials`, {
        accessToken: newToken,
      });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: source.id, object: 'source_store', vendorTag: 'Revoked' });
      expect(res.text).not.toContain(newToken);
      expect(res.body).not.toHaveProperty('accessToken');
      expect((await api().post(`/v1/sync_jobs/${id}/retry`)).status).toBe(200);
      await jobReaches(id, 'completed');
      expect(await sim().orders(source.shopDomain)).toHaveLength(1);
      const audit = await api().get(`/v1/audit_log?action=source_store.credentials_rotated&resource_id=${source.id}`);
      expect(audit.body.data).toEqual([
        expect.objectContaining({
          action: 'source_store.credentials_rotated',
          resourceType: 'source_store',
          resourceId: source.id,
          resellerStoreId: reseller.id,
          actor: { type: 'api_key', id: expect.any(String) },
          metadata: { rotated: ['accessToken'] },
        }),
      ]);
      expect(audit.text).not.toContain(newToken);
      expect(JSON.stringify(log.lines())).not.toContain(newToken);
    });

    it('keeps the replaced webhook secret verifying for 24 hours, then no more', async () => {
      const oldSecret = unique('whsec_old');
      const newSecret = unique('whsec_new');
      const reseller = await createResellerStore(api(), { webhookSecret: oldSecret });
      await createSourceStore(api(), reseller.id, { vendorTag: 'Rotating' });

      const res = await api().post(`/v1/reseller_stores/${reseller.id}/credentials`, { webhookSecret: newSecret });

      expect(res.status).toBe(200);
      expect(res.text).not.toContain(newSecret);
      expect((await order(reseller.shopDomain, newSecret, 'Rotating')).status).toBe(200);
      // During the overlap the platform may still sign with the old one.
      expect((await order(reseller.shopDomain, oldSecret, 'Rotating')).status).toBe(200);
      expect((await order(reseller.shopDomain, 'whsec_neither', 'Rotating')).status).toBe(401);
      const [entry] = (await api().get(`/v1/audit_log?action=reseller_store.credentials_rotated`)).body.data;
      expect(entry).toMatchObject({ resourceId: reseller.id, metadata: { rotated: ['webhookSecret'] } });
      expect(Date.parse(entry.metadata.previousWebhookSecretValidUntil) - Date.now()).toBeGreaterThan(23.9 * 3600_000);

      // 24 hours later (the rotation's time moved back, as a clock would move forward).
      await service.doc.send(
        new UpdateCommand({
          TableName: service.tableName,
          Key: resellerStoreKey(reseller.id),
          UpdateExpression: 'SET previousWebhookSecretUntil = :past',
          ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
        }),
      );
      expect((await order(reseller.shopDomain, oldSecret, 'Rotating')).status).toBe(401);
      expect((await order(reseller.shopDomain, newSecret, 'Rotating')).status).toBe(200);
      expect(JSON.stringify(log.lines())).not.toMatch(new RegExp(`${oldSecret}|${newSecret}`));
    });

    it('takes two rotations at once one after the other: neither is refused, both are audited', async () => {
      const first = unique('whsec_first');
      const [a, b] = [unique('whsec_a'), unique('whsec_b')];
      const reseller = await createResellerStore(api(), { webhookSecret: first });
      await createSourceStore(api(), reseller.id, { vendorTag: 'Twice' });
      const path = `/v1/reseller_stores/${reseller.id}/credentials`;

      // The first rotation has read the store and is held at its write while the second goes through.
      const held = service.runtime.faults.inject({
        function: 'RotateResellerStoreCredentials',
        service: 'DynamoDB',
        command: 'TransactWriteItems',
        action: 'hold',
        times: 1,
      });
      const slow = api().post(path, { webhookSecret: a });
      await held.reached;
      const fast = await api().post(path, { webhookSecret: b });
      held.release();
      const answers = [await slow, fast];

      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const entries = (
        await api().get(`/v1/audit_log?action=reseller_store.credentials_rotated&resource_id=${reseller.id}`)
      ).body.data;
      expect(entries).toHaveLength(2);
      // The held one, read again, rotated over the other: it is the last, and the one it replaced verifies.
      const verifying = [];
      for (const secret of [first, a, b])
        if ((await order(reseller.shopDomain, secret, 'Twice')).status === 200) verifying.push(secret);
      expect(verifying.sort()).toEqual([a, b].sort());
    });

    it('refuses an empty body, an unknown field, and a deleted store', async () => {
      const reseller = await createResellerStore(api());
      const path = `/v1/reseller_stores/${reseller.id}/credentials`;
      expect((await api().post(path, {})).body.error).toMatchObject({ code: 'validation_failed' });
      expect((await api().post(path, { name: 'x' })).body.error).toMatchObject({ code: 'validation_failed' });
      await api().delete(`/v1/reseller_stores/${reseller.id}`);
      expect((await api().post(path, { accessToken: 'tok' })).status).toBe(404);
    });
  });
});
