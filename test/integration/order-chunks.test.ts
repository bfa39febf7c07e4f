import { scanAll, serviceForSuite } from './support.js';

jest.setTimeout(120_000);

/**
 * An order with more jobs than one DynamoDB transaction holds is written in chunks
 * (shared/order-flow/receiving.ts). Here the writes run against DynamoDB Local and "crash" between
 * chunks; a redelivery, or the first job's worker, must then write exactly the jobs planned, with
 * the same ids, and nothing else.
 */

let orderJobs: typeof import('../../shared/order-flow/receiving.js');
let syncJobs: typeof import('../../shared/order-flow/order-repository.js');

const { service } = serviceForSuite({ simulator: false });
beforeAll(async () => {
  // The use cases below run in this process, against the runtime's table.
  Object.assign(process.env, {
    TABLE_NAME: service.tableName,
    AWS_ENDPOINT_URL_DYNAMODB: service.runtime.endpoints.dynamodb,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  orderJobs = await import('../../shared/order-flow/receiving.js');
  syncJobs = await import('../../shared/order-flow/order-repository.js');
}, 90_000);

const groups = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, n) => ({
    sourceStoreId: `sst_${prefix}${String(n).padStart(4, '0')}`,
    vendorTag: `Tag ${n}`,
  }));

const order = (externalOrderId: string, count: number, rawBody = '{"id":1}') => ({
  ownerId: 'owner_chunks',
  resellerStoreId: 'rst_chunks',
  resellerShopDomain: 'chunks.myshopify.com',
  externalOrderId,
  rawBody: Buffer.from(rawBody),
  groups: groups(count, externalOrderId),
});

/** The order's job items, each with its id (a job item's id is its key's: `SJ#<id>`). */
const jobsOf = async (externalOrderId: string) =>
  (await scanAll(service.doc, service.tableName))
    .filter((item) => item.SK === 'SJ' && item.externalOrderId === externalOrderId)
    .map((item): Record<string, any> => ({ ...item, id: String(item.PK).slice('SJ#'.length) }));

const crashAfter = (written: number) => async (count: number) => {
  if (count >= written) throw new Error('the function died here');
};

describe('an order with more jobs than one transaction holds', () => {
  it('writes every job, the first one carrying the count', async () => {
    const result = await orderJobs.createJobsForOrder(order('chunks-1', 250));
    expect(result.created).toBe(true);
    expect(result.jobIds).toHaveLength(250);
    expect(new Set(result.jobIds).size).toBe(250);
    const items = await jobsOf('chunks-1');
    expect(items).toHaveLength(250);
    const first = items.find((i) => i.id === result.jobIds[0])!;
    expect(first.orderJobCount).toBe(250);
    expect(first.orderRouting).toBeInstanceOf(Uint8Array);
  });

  it.each([100, 200])(
    'after a crash once %i jobs were written, a redelivery writes the rest and answers the same ids',
    async (writtenBeforeCrash) => {
      const id = `chunks-crash-${writtenBeforeCrash}`;
      await expect(
        orderJobs.createJobsForOrder(order(id, 250), { afterWrite: crashAfter(writtenBeforeCrash) }),
      ).rejects.toThrow('the function died here');
      expect(await jobsOf(id)).toHaveLength(writtenBeforeCrash);

      // The redelivery routes the same order differently (a store was added): the plan recorded wins.
      const redelivery = await orderJobs.createJobsForOrder({ ...order(id, 260), groups: groups(260, 'other') });

      expect(redelivery.created).toBe(false);
      expect(redelivery.written).toHaveLength(250 - writtenBeforeCrash);
      const items = await jobsOf(id);
      expect(items).toHaveLength(250);
      expect(items.map((i) => i.id).sort()).toEqual([...redelivery.jobIds].sort());
      expect(new Set(items.map((i) => i.sourceStoreId))).toEqual(new Set(groups(250, id).map((g) => g.sourceStoreId)));
      expect(items.every((i) => i.status === 'pending' && i.generation === 1)).toBe(true);

      const again = await orderJobs.createJobsForOrder(order(id, 250));
      expect(again).toMatchObject({ created: false, jobIds: redelivery.jobIds, written: [] });
      expect(await jobsOf(id)).toHaveLength(250);
    },
  );

  it('lets the first job complete the order when no redelivery comes', async () => {
    const id = 'chunks-no-redelivery';
    await expect(orderJobs.createJobsForOrder(order(id, 150), { afterWrite: crashAfter(100) })).rejects.toThrow();
    const first = (await syncJobs.loadJobs([(await jobsOf(id)).find((i) => i.orderJobCount)!.id as string]))[0];

    const written = await orderJobs.completeOrderJobs(first);

    expect(written).toHaveLength(50);
    expect(await jobsOf(id)).toHaveLength(150);
    expect(await orderJobs.completeOrderJobs(first)).toEqual([]);
  });

  it('keeps a large body once, in parts beside the first job, and every job points at it', async () => {
    // Incompressible text: its compressed form needs more than one 350 KB part.
    const noise = Array.from({ length: 900_000 }, () => String.fromCharCode(33 + Math.floor(Math.random() * 90)))
      .join('')
      .replace(/["\\]/g, 'x');
    const result = await orderJobs.createJobsForOrder(order('chunks-big', 3, `{"id":1,"note":"${noise}"}`));
    const items = await scanAll(service.doc, service.tableName);
    const parts = items.filter((i) => i.PK === `SJ#${result.jobIds[0]}` && String(i.SK).startsWith('BODY#'));
    expect(parts.length).toBeGreaterThan(1);
    const jobs = await jobsOf('chunks-big');
    expect(jobs.every((j) => j.orderBodyParts === parts.length && j.orderBody === undefined)).toBe(true);
  });
});
