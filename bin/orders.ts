import { type ApiClient, type Schemas, unwrap } from '../client/client.js';
import {
  API_OPTIONS,
  apiClientOf,
  DEFAULT_API_URL,
  type Io,
  parseOptions,
  positiveInteger,
  runAsMain,
  table,
  tool,
  UsageError,
} from './cli/command-line.js';

/**
 * `npm run orders -- show <rst_id> <order id> | list <rst_id> [--unrouted]`: a reseller store's orders
 * as the service saw them (CONTRACT.md §10.8), through the typed API client, like `npm run jobs`.
 */

type Order = Schemas['order'];

const HELP = {
  main: `usage: npm run orders -- <command> [options]

A reseller store's orders, through the API: the local service by default, or a deployed one.

commands:
  list <rst_id> [--unrouted]  the store's orders, newest first; --unrouted: only those with unrouted items
  show <rst_id> <order id>    one order: how it arrived, its jobs, its items that went to no supplier and why

options of every command:
  --url <url>   the API's base URL (default: $API_URL, else ${DEFAULT_API_URL})
  --key <key>   an API key (default: $API_KEY)
  --json        JSON instead of text
  -h, --help    this help; \`npm run orders -- <command> --help\` for one command's`,
  list: `usage: npm run orders -- list <rst_id> [--unrouted] [--limit <n>] [--url <url>] [--key <key>] [--json]

The reseller store's orders, newest first.

  --unrouted   only orders with items that went to no supplier: the suppliers to add
  --limit <n>  at most n orders (default 20; more than 100 are fetched page by page)`,
  show: `usage: npm run orders -- show <rst_id> <order id> [--url <url>] [--key <key>] [--json]

One order: when and how it arrived (webhook or poll), its sync jobs, its cancellation, and each item
that went to no supplier with why (no_source_store, no_vendor, gift_card).`,
};

const listOrders = async (api: ApiClient, rstId: string, unrouted: boolean, limit: number) => {
  const orders: Order[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = unwrap(
      await api.GET('/v1/reseller_stores/{rst_id}/orders', {
        params: {
          path: { rst_id: rstId },
          query: {
            limit: Math.min(100, limit - orders.length),
            starting_after: startingAfter,
            ...(unrouted ? { unrouted: 'true' as const } : {}),
          },
        },
      }),
    );
    orders.push(...page.data);
    if (!page.has_more || orders.length >= limit || page.data.length === 0) return orders;
    startingAfter = page.data.at(-1)?.externalOrderId;
  }
};

const ORDER_COLUMNS = {
  externalOrderId: 'ORDER',
  receivedAt: 'RECEIVED',
  receivedVia: 'VIA',
  jobs: 'JOBS',
  unrouted: 'UNROUTED',
  cancelledAt: 'CANCELLED',
};

const orderRow = (order: Order) => ({
  ...order,
  jobs: order.syncJobIds.length,
  unrouted: order.unroutedLineItems.length,
});

const list = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(
    args,
    { ...API_OPTIONS, unrouted: { type: 'boolean' }, limit: { type: 'string' } },
    1,
  );
  if (values.help) return void io.out(HELP.list);
  const [rstId] = positionals;
  if (!rstId) throw new UsageError('list needs a reseller store id (rst_…)');
  const limit = positiveInteger('limit', values.limit, 20);
  const orders = await listOrders(apiClientOf(values, io), rstId, values.unrouted ?? false, limit);
  if (values.json) return void io.out(JSON.stringify(orders, null, 2));
  if (!orders.length) return void io.out('no orders');
  for (const line of table(orders.map(orderRow), ORDER_COLUMNS)) io.out(line);
};

const field = (name: string, value: unknown) =>
  `${name.padEnd(18)}${value === null || value === undefined ? '-' : String(value)}`;

const show = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(args, API_OPTIONS, 2);
  if (values.help) return void io.out(HELP.show);
  const [rstId, externalOrderId] = positionals;
  if (!rstId || !externalOrderId) throw new UsageError('show needs a reseller store id (rst_…) and an order id');
  const order = unwrap(
    await apiClientOf(values, io).GET('/v1/reseller_stores/{rst_id}/orders/{externalOrderId}', {
      params: { path: { rst_id: rstId, externalOrderId } },
    }),
  );
  if (values.json) return void io.out(JSON.stringify(order, null, 2));
  for (const name of ['externalOrderId', 'resellerStoreId', 'receivedAt', 'receivedVia', 'cancelledAt'] as const)
    io.out(field(name, order[name]));
  io.out(order.syncJobIds.length ? 'sync jobs:' : 'sync jobs: none');
  for (const id of order.syncJobIds) io.out(`  ${id}`);
  io.out(order.unroutedLineItems.length ? 'unrouted line items:' : 'unrouted line items: none');
  for (const line of order.unroutedLineItems)
    io.out(
      `  ${line.resellerLineItemId ?? '-'}  ${line.sku ?? '-'}  ${line.title ?? '-'}  ×${line.quantity}` +
        `  vendor ${line.vendor === null ? '-' : JSON.stringify(line.vendor)}  ${line.reason}`,
    );
};

export const main = tool('orders', HELP.main, { list, show });

runAsMain(import.meta.url, main);
