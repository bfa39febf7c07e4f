import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { type ListState, readPage, startList } from '../../console/needs';
import { buildConsole, consoleDefine } from '../../lib/console-build';

/**
 * The operator console's parts that need no browser: the function that serves its files, and the
 * merge of the API's lists into "needs a person" (console/needs.ts) against a fake API whose lists
 * keep SPEC 8.1's rules (newest first, `starting_after`, `has_more`).
 */

const files = buildConsole(resolve(__dirname, '../..'));

describe('the console’s files', () => {
  let handler: (event: unknown, context: unknown) => Promise<APIGatewayProxyStructuredResultV2>;
  beforeAll(async () => {
    // What esbuild's `define` writes into the function's bundle.
    (globalThis as any).__CONSOLE_FILES__ = JSON.parse(consoleDefine(files).__CONSOLE_FILES__);
    ({ handler } = (await import('../../functions/console')) as any);
  });
  afterAll(() => {
    delete (globalThis as any).__CONSOLE_FILES__;
  });

  const get = (file: string | undefined, acceptEncoding?: string) =>
    handler(
      {
        rawPath: `/console/${file ?? ''}`,
        headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
        ...(file === undefined ? {} : { pathParameters: { file } }),
        requestContext: { requestId: 'apigw-1', http: { method: 'GET', path: `/console/${file ?? ''}` } },
        isBase64Encoded: false,
      },
      { awsRequestId: 'lambda-1', functionName: 'Console' },
    );

  it('answers the page at /console, gzipped to a client that accepts it, with the console’s headers', async () => {
    const response = await get(undefined, 'gzip, deflate, br');
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Encoding': 'gzip',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Request-Id': expect.stringMatching(/^req_/),
    });
    expect(response.headers!['Content-Security-Policy']).toMatch(/^default-src 'none'; script-src 'self';/);
    // HTTPS only from the first visit on, subdomains too, for at least a year (what preload lists ask).
    const hsts = /^max-age=(\d+); includeSubDomains$/.exec(response.headers!['Strict-Transport-Security'] as string);
    expect(Number(hsts?.[1])).toBeGreaterThanOrEqual(31_536_000);
    // No powerful browser feature: each one the policy names is allowed to no origin, `()`.
    const features = String(response.headers!['Permissions-Policy']).split(', ');
    expect(features).toEqual(expect.arrayContaining(['camera=()', 'microphone=()', 'geolocation=()', 'payment=()']));
    expect(features.every((feature) => /^[a-z-]+=\(\)$/.test(feature))).toBe(true);
    expect(response.isBase64Encoded).toBe(true);
    const html = gunzipSync(Buffer.from(response.body!, 'base64')).toString('utf8');
    expect(html).toContain('<script type="module" src="/console/console.js"></script>');
  });

  it('answers a file plain to a client that does not accept gzip', async () => {
    const response = await get('console.js');
    expect(response.headers).toMatchObject({ 'Content-Type': 'text/javascript; charset=utf-8' });
    expect(response.headers!['Content-Encoding']).toBeUndefined();
    expect(Buffer.from(response.body!, 'base64').length).toBe(files['console.js'].bytes);
  });

  it('answers the contract’s 404 for any other file, an inherited property’s name included', async () => {
    for (const file of ['nothing.js', '../package.json', 'constructor', '__proto__']) {
      const response = await get(file, 'gzip');
      expect(response.statusCode).toBe(404);
      expect(JSON.parse(response.body!).error.code).toBe('resource_missing');
    }
  });

  it('is reached at /console/ through the $default route, which sends it on to /console; nothing else', async () => {
    // An HTTP API route cannot end with `/`, and `/console/{file+}` does not match an empty segment.
    const { handler: fallback } = (await import('../../functions/not-found')) as any;
    const ask = (method: string, path: string) =>
      fallback(
        { rawPath: path, headers: {}, requestContext: { requestId: 'apigw-2', http: { method, path } } },
        { awsRequestId: 'lambda-2', functionName: 'NotFound' },
      );
    for (const method of ['GET', 'HEAD']) {
      const moved = await ask(method, '/console/');
      expect(moved.statusCode).toBe(308);
      expect(moved.headers).toMatchObject({ Location: '/console', 'Request-Id': expect.stringMatching(/^req_/) });
    }
    for (const [method, path] of [
      ['POST', '/console/'],
      ['GET', '/console//'],
      ['GET', '/v1/nothing/'],
    ]) {
      const missing = await ask(method, path);
      expect(missing.statusCode).toBe(404);
      expect(JSON.parse(missing.body).error.code).toBe('resource_missing');
    }
  });

  it('stays far under its budget of 150 kB gzipped', () => {
    const total = Object.values(files).reduce((sum, file) => sum + file.gzipBytes, 0);
    expect(total).toBeLessThan(150 * 1024);
  });
});

type Job = { id: string; createdAt: string } & Record<string, any>;
const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
const job = (id: string, n: number, fields: Record<string, any> = {}): Job => ({
  id,
  createdAt: at(n),
  status: 'dead',
  attention: null,
  cancellation: null,
  ...fields,
});

/**
 * A fake of the API the merge reads: each list newest first by (`createdAt`, `id`), paged by
 * `starting_after` and `limit`; `held` refused as an unknown parameter unless `holds` is given.
 */
const fakeApi = (lists: { jobs: Job[]; attention?: { id: string; jobId: string; n: number }[]; holds?: boolean }) => {
  const calls: string[] = [];
  const page = <T extends { id: string }>(items: T[], query: Record<string, any>) => {
    const from = query.starting_after ? items.findIndex((item) => item.id === query.starting_after) + 1 : 0;
    const data = items.slice(from, from + query.limit);
    return { data, has_more: from + query.limit < items.length };
  };
  const ok = (data: unknown) => ({ data, response: new Response(null, { status: 200 }) });
  const newestFirst = <T extends { createdAt: string; id: string }>(items: T[]) =>
    [...items].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  const api = {
    GET: async (path: string, init: { params: { query?: Record<string, any>; path?: Record<string, string> } }) => {
      const query = init.params.query ?? {};
      calls.push(`${path} ${JSON.stringify(query)}`);
      if (path === '/v1/sync_jobs/{id}') return ok(lists.jobs.find((j) => j.id === init.params.path!.id));
      if (path === '/v1/audit_log') {
        const entries = newestFirst(
          (query.action === 'sync_job.attention_required' ? (lists.attention ?? []) : []).map((e) => ({
            id: e.id,
            resourceId: e.jobId,
            createdAt: at(e.n),
          })),
        );
        return ok(page(entries, query));
      }
      if (query.held && !lists.holds)
        return {
          error: { error: { code: 'validation_failed', message: 'Unknown parameter held.', param: 'held' } },
          response: new Response(null, { status: 400 }),
        };
      const matching = lists.jobs.filter((j) => (query.held ? j.hold : j.status === query.status));
      return ok(page(newestFirst(matching), query));
    },
  };
  return { api: api as any, calls };
};

const everyPage = async (api: any, state: ListState, limit: number) => {
  const pages: string[][] = [];
  const reasons = new Map<string, string[]>();
  let notes: string[] = [];
  for (let more = true; more; ) {
    const page = await readPage(api, state, limit);
    pages.push(page.rows.map((row) => row.job.id));
    for (const row of page.rows) reasons.set(row.job.id, row.reasons);
    notes = page.notes;
    state = page.next;
    more = page.hasMore;
  }
  return { pages, reasons, notes };
};

describe('needs a person: the merged list', () => {
  it('merges dead, failed and held newest first, page after page, never skipping or repeating a job', async () => {
    const jobs = [
      ...[1, 4, 7, 10, 13].map((n) => job(`sj_dead${n}`, n)),
      ...[2, 5, 8, 11].map((n) => job(`sj_failed${n}`, n, { status: 'failed' })),
      ...[3, 6, 9].map((n) => job(`sj_held${n}`, n, { status: 'pending', hold: { reasons: ['payment'] } })),
      job('sj_completed12', 12, { status: 'completed' }),
    ];
    const { api } = fakeApi({ jobs, holds: true });
    const { pages, notes } = await everyPage(api, startList({}), 4);
    expect(pages).toEqual([
      ['sj_dead13', 'sj_failed11', 'sj_dead10', 'sj_held9'],
      ['sj_failed8', 'sj_dead7', 'sj_held6', 'sj_failed5'],
      ['sj_dead4', 'sj_held3', 'sj_failed2', 'sj_dead1'],
    ]);
    expect(notes).toEqual([]);
  });

  it('shows a job in two lists once with both reasons, and drops an audit entry whose reason has passed', async () => {
    const jobs = [
      job('sj_a', 1, { attention: { reason: 'edited', since: at(20) } }),
      job('sj_b', 2),
      job('sj_c', 3, { status: 'completed', attention: { reason: 'edited', since: at(21) } }),
      // Needed attention once; a person dealt with it since.
      job('sj_d', 4, { status: 'completed', attention: null }),
    ];
    const attention = [
      { id: 'aud_1', jobId: 'sj_a', n: 20 },
      { id: 'aud_2', jobId: 'sj_c', n: 21 },
      { id: 'aud_3', jobId: 'sj_d', n: 22 },
    ];
    const { api } = fakeApi({ jobs, attention, holds: true });
    const { pages, reasons } = await everyPage(api, startList({}), 3);
    expect(pages).toEqual([['sj_c', 'sj_a', 'sj_b']]);
    expect(reasons.get('sj_a')!.sort()).toEqual(['attention', 'dead']);
    expect(reasons.get('sj_c')).toEqual(['attention']);
  });

  it('reads an audit entry’s job only when its row may be on the page, and every page still right', async () => {
    const jobs = [
      ...[30, 31, 32, 33, 34].map((n) => job(`sj_dead${n}`, n)),
      ...[1, 2, 3, 4, 5, 6].map((n) =>
        job(`sj_att${n}`, n, { status: 'completed', attention: n === 2 ? null : { reason: 'edited', since: at(n) } }),
      ),
    ];
    const attention = [1, 2, 3, 4, 5, 6].map((n) => ({ id: `aud_${n}`, jobId: `sj_att${n}`, n }));
    const { api, calls } = fakeApi({ jobs, attention, holds: true });
    const reads = () => calls.filter((call) => call.startsWith('/v1/sync_jobs/{id}')).length;
    // The first page is all dead jobs, newer than every audit entry: no job is read for it.
    const first = await readPage(api, startList({}), 4);
    expect(first.rows.map((row) => row.job.id)).toEqual(['sj_dead34', 'sj_dead33', 'sj_dead32', 'sj_dead31']);
    expect(reads()).toBe(0);
    // The second: one dead job, then the newest audit entries' jobs, only as many as the page lacks.
    const second = await readPage(api, first.next, 4);
    expect(second.rows.map((row) => row.job.id)).toEqual(['sj_dead30', 'sj_att6', 'sj_att5', 'sj_att4']);
    expect(reads()).toBe(3);
    // The third: the rest, sj_att2 read and dropped (it needs nobody now), and nothing left after it.
    const third = await readPage(api, second.next, 4);
    expect(third.rows.map((row) => row.job.id)).toEqual(['sj_att3', 'sj_att1']);
    expect(third.hasMore).toBe(false);
    expect(reads()).toBe(6);
  });

  it('reads only the list of the reason filtered on, with the store filter passed on', async () => {
    const { api, calls } = fakeApi({ jobs: [job('sj_f', 1, { status: 'failed' })] });
    const { pages } = await everyPage(api, startList({ reason: 'failed', resellerStoreId: 'rst_1' }), 25);
    expect(pages).toEqual([['sj_f']]);
    expect(calls).toEqual(['/v1/sync_jobs {"status":"failed","reseller_store_id":"rst_1","limit":25}']);
  });

  it('still lists the rest, with a note, when the API does not know `held`', async () => {
    const { api } = fakeApi({ jobs: [job('sj_d', 1)] });
    const { pages, notes } = await everyPage(api, startList({}), 25);
    expect(pages).toEqual([['sj_d']]);
    expect(notes).toEqual(['This API does not list held jobs.']);
  });
});
