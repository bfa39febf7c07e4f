import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { main as jobs } from '../../bin/jobs.js';
import {
  createResellerStore,
  createSourceStore,
  replaceAccessToken,
  startService,
  TEST_KEYS,
  type TestService,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * The operator console (issue 33) in a real browser: Debian's Chromium, driven by playwright-core,
 * against the local runtime `npm start` runs. Each page is checked with axe-core (no serious or
 * critical violation) and kept as a screenshot in test-artifacts/console/ (gitignored).
 */

const ARTIFACTS = join(__dirname, '../../test-artifacts/console');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Debian's package (`apt-get install -y chromium`; .ci/run installs it), or CHROMIUM_PATH. */
const chromiumPath = () => {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('no chromium on the PATH: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
  }
};

let service: TestService;
let browser: Browser;
let consoleUrl: string;
const stores: Record<'down' | 'bulk' | 'refuse', { rst: any; source: any; secret: string }> = {} as never;
let deadJob: any;
let refusedJob: any;

jest.setTimeout(60_000);

const order = async (store: { rst: any; source: any; secret: string }) =>
  (
    await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: store.rst.shopDomain,
      secret: store.secret,
      body: orderPayload([{ vendor: store.source.vendorTag, price: '13.00', quantity: 2 }]),
    })
  ).body.syncJobIds[0] as string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  service = await startService();
  consoleUrl = `${service.runtime.apiUrl}/console/`;
  const owner = service.api('owner_a');
  for (const name of ['down', 'bulk', 'refuse'] as const) {
    const secret = `whsec_console_${name}`;
    const rst = await createResellerStore(owner, { name: `Console ${name} shop`, webhookSecret: secret });
    // Every call to this supplier answers 500: its jobs go dead after their receives.
    const source = await createSourceStore(owner, rst.id, { name: `Supplier of ${name}`, accessToken: 'tok_fail500' });
    stores[name] = { rst, source, secret };
  }
  const ids = await Promise.all([order(stores.down), order(stores.bulk), order(stores.bulk), order(stores.refuse)]);
  const dead = await Promise.all(ids.map((id) => jobReaches(owner, id, 'dead', 90_000)));
  deadJob = dead[0];
  refusedJob = dead[3];
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

/** A fresh tab, recording every request it makes and every error its console logs (a CSP refusal, say). */
const openConsole = async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(consoleUrl);
  return { page, requests, errors };
};

/** Tab (only the keyboard) until `target` has the focus. */
const tabTo = async (page: Page, target: Locator) => {
  for (let i = 0; i < 60; i++) {
    if (await target.evaluate((element: any) => element === element.ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error('the element never got the focus by Tab');
};

const signIn = async (page: Page, key: string) => {
  const field = page.getByLabel('API key');
  await tabTo(page, field);
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
};

/** axe-core's serious and critical violations of what the page shows now (none expected). */
const seriousViolations = async (page: Page) => {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (it refuses inline scripts).
  await page.evaluate(`${AXE}\n;undefined`);
  const result: any = await page.evaluate('axe.run(document, { resultTypes: ["violations"] })');
  return result.violations
    .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
};

const keep = async (page: Page, name: string) => {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  expect(await seriousViolations(page)).toEqual([]);
};

describe('the operator console', () => {
  it('is served from the API’s origin with a strict CSP, X-Frame-Options DENY and no inline script', async () => {
    // `npm start`'s URL, `/console/`, matches no route (as on API Gateway): `$default` sends it on.
    const moved = await fetch(consoleUrl, { redirect: 'manual' });
    expect(moved.status).toBe(308);
    expect(moved.headers.get('location')).toBe('/console');
    const page = await fetch(consoleUrl, { headers: { 'accept-encoding': 'gzip' } });
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${service.runtime.apiUrl}/console`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('strict-transport-security')).toMatch(/^max-age=\d+; includeSubDomains$/);
    expect(page.headers.get('permissions-policy')).toContain('camera=()');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect([...html.matchAll(/<script\b[^>]*>/g)].every(([tag]) => /\bsrc="\/console\//.test(tag))).toBe(true);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\bstyle=|<style/);

    const script = await fetch(`${service.runtime.apiUrl}/console/console.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).not.toMatch(/localStorage/);
    const missing = await fetch(`${service.runtime.apiUrl}/console/nothing.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe('resource_missing');
  });

  it('shows the API’s 401 message for a wrong API key, and nothing else', async () => {
    const { page, requests, errors } = await openConsole();
    const wrongKey = `sk_test_${'z'.repeat(43)}`;
    const refusal = (await service.api(wrongKey).get('/v1/reseller_stores')).body.error.message;
    expect(refusal).toBeTruthy();
    await signIn(page, wrongKey);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(refusal);
    expect(await page.locator('table, header, nav').count()).toBe(0);
    // The heading and the key's form with the message: nothing of any page.
    expect(await page.locator('main > *').evaluateAll((nodes: any[]) => nodes.map((n) => n.tagName))).toEqual([
      'H1',
      'FORM',
    ]);
    expect(await page.getByRole('alert').count()).toBe(1);
    expect(await page.evaluate('sessionStorage.length + localStorage.length')).toBe(0);
    expect(requests.every((url) => url.startsWith(service.runtime.apiUrl) && !url.includes(wrongKey))).toBe(true);
    // The list's first page is read beside the stores' names (console/list.ts): each of those reads is
    // refused too, and may land before or after the message; nothing else fails.
    expect(errors).toContain(`401 ${service.runtime.apiUrl}/v1/reseller_stores?limit=100`);
    expect(errors.filter((error) => !error.startsWith(`401 ${service.runtime.apiUrl}/v1/`))).toEqual([]);
    await keep(page, 'key-refused');
  });

  it('lists the job a fail500 supplier killed, with its error, and keeps the key in sessionStorage only', async () => {
    const { page, requests, errors } = await openConsole();
    await keep(page, 'key');
    await signIn(page, TEST_KEYS.owner_a);
    const row = page.locator(`tr[data-job="${deadJob.id}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[0]).toBe(deadJob.id);
    expect(cells[1]).toBe(`${deadJob.externalOrderId}\n${stores.down.rst.name}`);
    expect(cells[2]).toBe(stores.down.source.name);
    expect(cells[3]).toBe('dead');
    expect(cells[5]).toBe(String(deadJob.attempts));
    expect(cells[6]).toBe(deadJob.errorMessage);
    expect(deadJob.errorMessage).toMatch(/500/);
    // The four dead jobs.
    const listed = await page
      .locator('tbody tr')
      .evaluateAll((rows: any[]) => rows.map((r) => r.getAttribute('data-job')));
    expect(listed).toHaveLength(4);
    expect(listed).toContain(deadJob.id);

    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([TEST_KEYS.owner_a]);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(page.url()).not.toContain(TEST_KEYS.owner_a);
    expect(requests.every((url) => url.startsWith(service.runtime.apiUrl) && !url.includes(TEST_KEYS.owner_a))).toBe(
      true,
    );
    expect(errors).toEqual([]);
    await keep(page, 'needs-a-person');

    // Filters: another store's jobs only, then a reason with none.
    await page.getByLabel('Reseller store').selectOption(stores.bulk.rst.id);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator(`tr[data-job="${deadJob.id}"]`).waitFor({ state: 'detached' });
    await page.getByRole('table', { name: /newest first/ }).waitFor();
    await expect(page.locator('tbody tr').count()).resolves.toBe(2);
    await page.getByLabel('Reason').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('Nothing needs a person.').waitFor();
  });

  it('finds a job by its id and by its reseller order id with the field labelled Search', async () => {
    const { page } = await openConsole();
    await signIn(page, TEST_KEYS.owner_a);
    await page.getByLabel('Search').fill(deadJob.id);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('table', { name: `Search results for ${deadJob.id}` }).waitFor();
    await page.getByLabel('Search').fill(deadJob.externalOrderId);
    await page.getByRole('button', { name: 'Find' }).click();
    const results = page.getByRole('table', { name: `Search results for ${deadJob.externalOrderId}` });
    await results.waitFor();
    expect(
      await results.locator('tbody tr').evaluateAll((rows: any[]) => rows.map((r) => r.getAttribute('data-job'))),
    ).toEqual([deadJob.id]);
    await page.getByLabel('Search').fill('no-such-order');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText('No job and no reseller order with the id no-such-order.').waitFor();
  });

  it('shows a job’s page; Retry once the supplier recovers completes it once, and its row leaves', async () => {
    const owner = service.api('owner_a');
    const { page } = await openConsole();
    await signIn(page, TEST_KEYS.owner_a);
    // By keyboard alone: Tab to the job's link, Enter.
    await tabTo(page, page.getByRole('link', { name: deadJob.id }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Job ${deadJob.id}` }).waitFor();
    expect(await page.locator('button[data-action]').allInnerTexts()).toEqual(['Retry']);
    const timeline = await page.locator('.timeline li').allInnerTexts();
    expect(timeline.some((line) => /Order received \(webhook\)/.test(line))).toBe(true);
    expect(
      timeline.some((line) => /Attempt 1: failed — trigger webhook · HTTP 500 · \d+ ms · error: .*500/.test(line)),
    ).toBe(true);
    expect(timeline.some((line) => /Dead \(audit, by the service\)/.test(line))).toBe(true);
    expect(await page.locator('.facts').innerText()).toContain('Status\ndead');
    expect(await page.getByRole('table', { name: /Line items/ }).innerText()).toMatch(
      /SKU-1\tItem 1\t2\t0\t0\t0\t0\t13\.00/,
    );
    await keep(page, 'job');

    await replaceAccessToken(service, { kind: 'source', id: stores.down.source.id }, 'shpat_recovered');
    // A double click: both clicks carry the button's one key, and the job is retried once.
    await page.getByRole('button', { name: 'Retry' }).dblclick();
    await page.locator('button[data-action="retry"]').waitFor({ state: 'detached' });
    await jobReaches(owner, deadJob.id, 'completed', 60_000);
    const retried = (await owner.get(`/v1/audit_log?resource_id=${deadJob.id}&action=sync_job.retried`)).body.data;
    expect(retried).toHaveLength(1);
    await page.reload();
    await page.locator('.facts').getByText('completed').waitFor();
    expect(await page.locator('button[data-action]').count()).toBe(0);

    await page.goto(`${consoleUrl}#/`);
    await page.getByRole('table', { name: /newest first/ }).waitFor();
    expect(await page.locator(`tr[data-job="${deadJob.id}"]`).count()).toBe(0);
  }, 90_000);

  it('shows the API’s message when it refuses a click', async () => {
    const owner = service.api('owner_a');
    const { page } = await openConsole();
    await signIn(page, TEST_KEYS.owner_a);
    await page.goto(`${consoleUrl}#/jobs/${refusedJob.id}`);
    const retry = page.getByRole('button', { name: 'Retry' });
    await retry.waitFor();
    // Someone else retried it since the page was drawn, and it completed: the API refuses another retry.
    await replaceAccessToken(service, { kind: 'source', id: stores.refuse.source.id }, 'shpat_recovered');
    expect((await owner.post(`/v1/sync_jobs/${refusedJob.id}/retry`)).status).toBe(200);
    await jobReaches(owner, refusedJob.id, 'completed', 60_000);
    const refusal = (await owner.post(`/v1/sync_jobs/${refusedJob.id}/retry`)).body.error;
    expect(refusal.code).toBe('sync_job_not_retryable');
    await retry.click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(refusal.message);
  }, 90_000);

  it('retries every dead job of a store after counting them, with the keys `jobs retry --all-dead` sends', async () => {
    const owner = service.api('owner_a');
    const rst = stores.bulk.rst.id;
    const dead = (await owner.get(`/v1/sync_jobs?status=dead&reseller_store_id=${rst}`)).body.data;
    expect(dead).toHaveLength(2);
    const { page } = await openConsole();
    await signIn(page, TEST_KEYS.owner_a);
    await page.getByRole('link', { name: 'Retry dead jobs' }).click();
    await page.getByLabel('Reseller store').selectOption(rst);
    await page.getByRole('button', { name: 'Count dead jobs' }).click();
    await page.getByText(`2 dead job(s) in ${stores.bulk.rst.name} will be retried.`).waitFor();
    await keep(page, 'bulk');

    // The command retries them first: the console's clicks then send the same keys, and act no more.
    const io = { out: () => undefined, err: () => undefined, env: {} };
    const cli = await jobs(
      ['retry', '--all-dead', '--store', rst, '--url', service.runtime.apiUrl, '--key', TEST_KEYS.owner_a],
      io,
    );
    expect(cli).toBe(0);
    await page.getByRole('button', { name: 'Retry 2 dead job(s)' }).click();
    await page.getByText('Retried 2 of 2 dead job(s).').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    for (const job of dead) {
      const entries = (await owner.get(`/v1/audit_log?resource_id=${job.id}&action=sync_job.retried`)).body.data;
      // Since its last death: the command's retry, and none from the console's clicks.
      expect(entries.filter((e: any) => e.createdAt > job.deadAt)).toHaveLength(1);
    }
  }, 90_000);

  it('holds a held job by hand, then releases it, and it goes on to its supplier', async () => {
    const owner = service.api('owner_a');
    const secret = 'whsec_console_held';
    // Every order of this store waits an hour (CONTRACT.md §11, `delay`).
    const rst = await createResellerStore(owner, {
      name: 'Console held shop',
      webhookSecret: secret,
      routingPolicy: { holdSeconds: 3600 },
    });
    const source = await createSourceStore(owner, rst.id, { name: 'Supplier of held' });
    const id = await order({ rst, source, secret });
    const held = await eventually(async () => {
      const job = (await owner.get(`/v1/sync_jobs/${id}`)).body;
      return job.hold && job;
    });
    expect(held).toMatchObject({ status: 'pending', hold: { reasons: ['delay'] } });

    const { page } = await openConsole();
    await signIn(page, TEST_KEYS.owner_a);
    const row = page.locator(`tr[data-job="${id}"]`);
    await row.waitFor();
    expect((await row.locator('td').allInnerTexts())[3]).toBe('held: delay');
    await row.getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: `Job ${id}` }).waitFor();
    expect(await page.locator('button[data-action]').allInnerTexts()).toEqual(['Hold', 'Release']);
    await keep(page, 'job-held');

    await page.getByRole('button', { name: 'Hold' }).dblclick();
    await page.locator('button[data-action="hold"]').waitFor({ state: 'detached' });
    expect(await page.locator('button[data-action]').allInnerTexts()).toEqual(['Release']);
    expect((await owner.get(`/v1/sync_jobs/${id}`)).body.hold.reasons.sort()).toEqual(['delay', 'manual']);

    await page.getByRole('button', { name: 'Release' }).click();
    await page.locator('button[data-action="release"]').waitFor({ state: 'detached' });
    await jobReaches(owner, id, 'completed', 60_000);
    const audit = (await owner.get(`/v1/audit_log?resource_id=${id}`)).body.data.map((e: any) => e.action);
    expect(audit.filter((a: string) => a === 'sync_job.held')).toHaveLength(1);
    expect(audit.filter((a: string) => a === 'sync_job.released')).toHaveLength(1);
    // The timeline shows both, by the key that clicked.
    await page.reload();
    await page.locator('.timeline li', { hasText: 'Held (audit, by API key' }).waitFor();
    await page.locator('.timeline li', { hasText: 'Released (audit, by API key' }).waitFor();
  }, 90_000);

  it('shows the stores with their health and links each to its unrouted orders', async () => {
    const { rst, secret } = stores.down;
    const unrouted = orderPayload([{ vendor: 'Nobody-sells-this', price: '4.00', sku: 'ORPHAN-1' }]);
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: rst.shopDomain,
      secret,
      body: unrouted,
    });
    expect(receipt.status).toBe(200);
    const { page } = await openConsole();
    await signIn(page, TEST_KEYS.owner_a);
    await page.getByRole('link', { name: 'Stores' }).click();
    await page.getByRole('heading', { name: 'Stores' }).waitFor();
    for (const { rst, source } of Object.values(stores)) {
      await page.getByRole('rowheader', { name: new RegExp(rst.id) }).waitFor();
      await page.getByRole('rowheader', { name: new RegExp(source.id) }).waitFor();
    }
    await keep(page, 'stores');
    await page.getByRole('link', { name: `Unrouted orders of ${stores.down.rst.name}` }).click();
    await page.getByRole('heading', { name: `Unrouted orders of ${stores.down.rst.name}` }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(`^${unrouted.id}\\b`) });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/ORPHAN-1\tItem 1\tNobody-sells-this\t1\tno_source_store/);
    await keep(page, 'unrouted');
  });
});
