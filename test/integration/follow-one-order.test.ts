import { readFileSync } from 'node:fs';
import { allFunctions } from '../../lib/functions.js';
import { modulesLoaded } from '../../lib/local/bundle.js';
import { PREBUILT_BUNDLES_ENV } from '../../lib/local/runtime.js';
import { createResellerStore, createSourceStore, serviceForSuite, unique } from './support.js';
import { eventually, fulfillmentPayload, orderPayload, sendWebhook, simulator } from './webhooks.js';

jest.setTimeout(120_000);

/**
 * docs/design.md's "Follow one order" names the functions one order's round trip invokes and the
 * modules of shared/ they load; this runs that round trip through the local runtime (the webhook,
 * the supplier order placed, the reseller's order tagged, the supplier's parcel propagated, the
 * change stream's events recorded), records the functions invoked and the files of its bundle each
 * one's threads loaded (its entry, its chunks, those imported on demand: a kind of work or a
 * platform's adapter that the round trip does not run is never loaded), reads the modules of those
 * files from the build's metafile, and fails when the document says otherwise.
 */

const SECTION = '### What one order loads';

/** The document's claims: the functions (`Name`) and, per folder of shared/, its modules. */
const documented = () => {
  const design = readFileSync('docs/design.md', 'utf8');
  const section = design.split(SECTION)[1]?.split('\n## ')[0];
  if (section === undefined) throw new Error(`docs/design.md has no "${SECTION}"`);
  const invokes = section.split('\n\n').find((paragraph) => paragraph.startsWith('Functions invoked:')) ?? '';
  const functions = [...invokes.matchAll(/`(\w+)`/g)].map(([, name]) => name).sort();
  const modules = section
    .split('\n')
    .flatMap((line) => {
      const row = /^- `(shared\/[\w-]+\/)`: (.*)$/.exec(line);
      return row ? [...row[2].matchAll(/`([\w.-]+)`/g)].map(([, file]) => `${row[1]}${file}`) : [];
    })
    .sort();
  const count = /Today: (\d+) modules of `shared\/` in (\d+) folders/.exec(section);
  return { functions, modules, count: count ? { modules: Number(count[1]), folders: Number(count[2]) } : undefined };
};

/** The modules of shared/ the functions' threads loaded in the run. */
const loadedBy = (functions: string[], outputsLoaded: (name: string) => string[]) => {
  const dir = process.env[PREBUILT_BUNDLES_ENV];
  if (!dir) throw new Error(`${PREBUILT_BUNDLES_ENV} is unset: run with the integration project's global set-up`);
  const entryOf = new Map(allFunctions().map((fn) => [fn.name, fn.entry]));
  const modules = new Set(
    functions.flatMap((name) => modulesLoaded(dir, entryOf.get(name) ?? `no function ${name}`, outputsLoaded(name))),
  );
  return [...modules].filter((module) => module.startsWith('shared/')).sort();
};

describe('docs/design.md, "Follow one order", checked by a run', () => {
  const invoked: { name: string; at: number }[] = [];
  const { service } = serviceForSuite({ onInvoke: (name) => invoked.push({ name, at: Date.now() }) });

  it('names the functions one order’s round trip invokes and every module of shared/ they load', async () => {
    const api = service.api('owner_a');
    const sim = simulator(service.runtime.simulator!.url);
    const vendorTag = unique('Acme');
    const resellerSecret = unique('whsec_r');
    const sourceSecret = unique('whsec_s');
    const reseller = await createResellerStore(api, { webhookSecret: resellerSecret });
    const source = await createSourceStore(api, reseller.id, { vendorTag, webhookSecret: sourceSecret });
    const payload = orderPayload([{ vendor: vendorTag, price: '10.00' }]);
    await sim.placeOrder(reseller.shopDomain, payload);
    invoked.length = 0; // the stores' set-up is not the round trip

    const received = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: payload,
    });
    expect(received.status).toBe(200);
    // Watched on the simulator, not through the API: a read of the API would invoke its functions.
    const [supplierOrder] = await eventually(async () => {
      const orders = await sim.orders(source.shopDomain);
      return orders.length > 0 && orders;
    });
    const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: source.shopDomain,
      secret: sourceSecret,
      body: fulfillmentPayload(supplierOrder.id),
      topic: 'fulfillments/create',
    });
    expect(shipped.status).toBe(200);
    const resellerOrder = await eventually(async () => {
      const order = (await sim.orders(reseller.shopDomain)).find((o) => Number(o.id) === payload.id);
      return order?.fulfillments?.length === 1 && String(order.tags ?? '') !== '' && order;
    }, 30_000);
    expect(String(resellerOrder.tags)).toContain('routed-');
    // The events leg: the change stream's consumer runs after the parcel's last write.
    const delivered = Date.now();
    await eventually(async () => invoked.some(({ name, at }) => name === 'EventRecorder' && at >= delivered), 30_000);

    const functions = [...new Set(invoked.map(({ name }) => name))].sort();
    const modules = loadedBy(functions, (name) => service.runtime.outputsLoaded(name));
    const folders = new Set(modules.map((module) => module.split('/').slice(0, 2).join('/')));
    const doc = documented();
    expect(functions).toEqual(doc.functions);
    expect(modules).toEqual(doc.modules);
    // Today's count, written beside the target (issue 40: at most 65 modules of shared/ in 12 folders).
    expect(doc.count).toEqual({ modules: modules.length, folders: folders.size });
  });
});
