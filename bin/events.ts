import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { type ApiClient, type Schemas, unwrap } from '../client/client.js';
import { EVENT_TYPES } from '../shared/entities/event.js';
import {
  API_OPTIONS,
  apiClientOf,
  CommandError,
  DEFAULT_API_URL,
  type Io,
  parseOptions,
  positiveInteger,
  runAsMain,
  table,
  tool,
  UsageError,
} from './cli/command-line.js';
import { invokeRecorder, type ReplayPorts, readStreamRange, receiveFrom, replayFailed } from './cli/replay-failed.js';

/**
 * `npm run events -- list | show <id> | endpoints list|create|rotate|recover …`: events and webhook
 * endpoints (CONTRACT.md §14) for an integrator or an on-call engineer, through the typed API client.
 */

type Event = Schemas['event'];
/** What these commands show of an endpoint (the answers of list, create and rotate alike). */
interface Endpoint {
  id: string;
  status: string;
  url: string;
  enabledEvents: string[];
  disabledReason: string | null;
  secret?: string;
}

const HELP = {
  main: `usage: npm run events -- <command> [options]

Events and webhook endpoints, through the API: the local service by default, or a deployed one.

commands:
  list                                   events, newest first
  show <evt_id>                          one event, with its deliveries
  endpoints list                         the webhook endpoints
  endpoints create <url> [--events <types>] [--description <text>]
                                         a new endpoint; its secret is shown this once
  endpoints rotate <we_id>               a new secret (the old one signs beside it for 24 hours)
  endpoints recover <we_id> [--since <date-time>]
                                         send again what failed since then (default: 24 hours ago)
  replay-failed [--queue-url <url> --function <name>]
                                         record the change stream batches the event recorder gave up on

options of every command but replay-failed:
  --url <url>   the API's base URL (default: $API_URL, else ${DEFAULT_API_URL})
  --key <key>   an API key (default: $API_KEY)
  --json        JSON instead of text
  -h, --help    this help`,
  list: `usage: npm run events -- list [--type <type>] [--failing] [--limit <n>] [--url <url>] [--key <key>] [--json]

  --type <type>  one type (${EVENT_TYPES.join(', ')}), or a group such as sync_job.*
  --failing      only events a delivery of which has failed and not succeeded since
  --limit <n>    at most n events (default 20, at most 100)`,
  show: 'usage: npm run events -- show <evt_id> [--url <url>] [--key <key>] [--json]',
  endpoints: `usage: npm run events -- endpoints list | create <url> [--events <t1,t2>] [--description <text>]
                                 | rotate <we_id> | recover <we_id> [--since <date-time>]

--events: a comma-separated list of event types, or * (the default) for every type.`,
  replay: `usage: npm run events -- replay-failed [--queue-url <url> --function <name> [--region <region>]] [--json]

Records the change stream batches the event recorder gave up on (its alarm EventRecorderFailuresAlarm):
each message of its on-failure queue names a batch's place in the stream; its records are read again
from the stream (which keeps them 24 hours) and handed to the event recorder, which records each event
once however often it is replayed. A message is deleted once its batch is recorded; one that is not
stays, and is listed with the reason (exit code 1).

  --queue-url <url>   a deployed stack's EventRecorderFailuresUrl output; with your AWS credentials
  --function <name>   its EventRecorderFunction output
  --region <region>   default: $AWS_REGION, else the queue URL's
without --queue-url: the running \`npm start\` (DATA_DIR, default .local/)`,
};

const EVENT_COLUMNS = { id: 'ID', type: 'TYPE', created: 'CREATED', objectId: 'OBJECT' };
const ENDPOINT_COLUMNS = { id: 'ID', status: 'STATUS', url: 'URL', events: 'EVENTS', disabledReason: 'DISABLED' };

const list = async (args: string[], io: Io) => {
  const options = {
    ...API_OPTIONS,
    type: { type: 'string' },
    failing: { type: 'boolean' },
    limit: { type: 'string' },
  } as const;
  const { values } = parseOptions(args, options, 0);
  if (values.help) return void io.out(HELP.list);
  const limit = Math.min(100, positiveInteger('limit', values.limit, 20));
  const query = {
    limit,
    type: values.type as Event['type'] | undefined,
    delivery_success: values.failing ? ('false' as const) : undefined,
  };
  const page = unwrap(await apiClientOf(values, io).GET('/v1/events', { params: { query } }));
  if (values.json) return void io.out(JSON.stringify(page.data, null, 2));
  if (!page.data.length) return void io.out('no events');
  const rows = page.data.map((e: Event) => ({ ...e, objectId: String(e.data.object.id ?? '-') }));
  for (const line of table(rows, EVENT_COLUMNS)) io.out(line);
};

const show = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(args, API_OPTIONS, 1);
  if (values.help) return void io.out(HELP.show);
  const [id] = positionals;
  if (!id) throw new UsageError('show needs an event id (evt_…)');
  const event = unwrap(await apiClientOf(values, io).GET('/v1/events/{id}', { params: { path: { id } } }));
  if (values.json) return void io.out(JSON.stringify(event, null, 2));
  io.out(`${event.id}  ${event.type}  ${event.created}`);
  io.out(JSON.stringify(event.data.object, null, 2));
  io.out(event.deliveries?.length ? 'deliveries:' : 'deliveries: none');
  for (const d of event.deliveries ?? [])
    io.out(
      `  ${d.endpointId}  ${d.status}  attempts ${d.attempts}  last ${d.lastResponseStatus ?? '-'}` +
        `  next ${d.nextAttemptAt ?? '-'}`,
    );
};

const endpointRows = (endpoints: Endpoint[]) =>
  endpoints.map((e) => ({ ...e, events: e.enabledEvents.join(','), disabledReason: e.disabledReason ?? '' }));

/** An endpoint just made or rotated: its secret, which no later answer shows. */
const withSecret = (endpoint: Endpoint, json: boolean | undefined, io: Io) => {
  if (json) return void io.out(JSON.stringify(endpoint, null, 2));
  io.out(`${endpoint.id}  ${endpoint.status}  ${endpoint.url}`);
  io.out(`secret: ${endpoint.secret} (shown this once: keep it where your receiver reads it)`);
};

const endpointCommands: Record<string, (api: ApiClient, args: string[], io: Io, json?: boolean) => Promise<unknown>> = {
  list: async (api, _args, io, json) => {
    const page = unwrap(await api.GET('/v1/webhook_endpoints', { params: { query: { limit: 100 } } }));
    if (json) return void io.out(JSON.stringify(page.data, null, 2));
    if (!page.data.length) return void io.out('no webhook endpoints');
    for (const line of table(endpointRows(page.data), ENDPOINT_COLUMNS)) io.out(line);
  },
  create: async (api, [url, ...rest], io, json) => {
    const { values } = parseOptions(rest, { events: { type: 'string' }, description: { type: 'string' } }, 0);
    if (!url) throw new UsageError('endpoints create needs a URL');
    const enabledEvents = (values.events ?? '*').split(',') as ['*'];
    const body = { url, enabledEvents, ...(values.description ? { description: values.description } : {}) };
    withSecret(unwrap(await api.POST('/v1/webhook_endpoints', { body })), json, io);
  },
  rotate: async (api, [id], io, json) => {
    if (!id) throw new UsageError('endpoints rotate needs an endpoint id (we_…)');
    const path = { id };
    withSecret(
      unwrap(await api.POST('/v1/webhook_endpoints/{id}/rotate_secret', { params: { path }, body: {} })),
      json,
      io,
    );
  },
  recover: async (api, [id, ...rest], io, json) => {
    const { values } = parseOptions(rest, { since: { type: 'string' } }, 0);
    if (!id) throw new UsageError('endpoints recover needs an endpoint id (we_…)');
    const since = values.since ?? new Date(Date.now() - 86_400_000).toISOString();
    const params = { path: { id } };
    const out = unwrap(await api.POST('/v1/webhook_endpoints/{id}/recover', { params, body: { since } }));
    if (json) return void io.out(JSON.stringify(out, null, 2));
    io.out(`${out.deliveries} failed deliveries since ${since} are sent again`);
  },
};

const endpoints = async (args: string[], io: Io) => {
  const options = {
    ...API_OPTIONS,
    events: { type: 'string' },
    description: { type: 'string' },
    since: { type: 'string' },
  } as const;
  const { values, positionals } = parseOptions(args, options, 2);
  const [sub, ...rest] = positionals;
  if (values.help || !sub) return void io.out(HELP.endpoints);
  const run = endpointCommands[sub];
  if (!run) throw new UsageError(`unknown endpoints command '${sub}' (list, create, rotate, recover)`);
  const passed = (['events', 'description', 'since'] as const).flatMap((name) => {
    const value = values[name];
    return value === undefined ? [] : [`--${name}`, value];
  });
  return run(apiClientOf(values, io), [...rest, ...passed], io, values.json);
};

/** The ports of a replay: a deployed stack's (signed, with the usual credentials) or the running `npm start`'s. */
const replayPorts = (values: { 'queue-url'?: string; function?: string; region?: string }, io: Io) => {
  const queueUrl = values['queue-url'];
  if (queueUrl) {
    if (!values.function)
      throw new UsageError('replay-failed --queue-url needs --function (the EventRecorderFunction output)');
    const region =
      values.region ??
      io.env.AWS_REGION ??
      io.env.AWS_DEFAULT_REGION ??
      /^https:\/\/sqs\.([a-z0-9-]+)\./.exec(queueUrl)?.[1];
    if (!region) throw new UsageError('replay-failed needs --region (or AWS_REGION)');
    const sqs = new SQSClient({ region });
    const streams = new DynamoDBStreamsClient({ region });
    const lambda = new LambdaClient({ region });
    const ports: ReplayPorts = {
      receive: receiveFrom(sqs, queueUrl),
      readRange: (info) => readStreamRange(streams, info),
      record: invokeRecorder(lambda, values.function),
    };
    return {
      ports,
      close: () => {
        for (const client of [sqs, streams, lambda]) client.destroy();
      },
    };
  }
  const dataDir = resolve(io.env.DATA_DIR && io.env.DATA_DIR !== ':memory:' ? io.env.DATA_DIR : '.local');
  const file = join(dataDir, 'endpoints.json');
  const running = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  if (!running?.streamFailures)
    throw new CommandError(
      `no running \`npm start\` in ${dataDir}; for a deployed stack give --queue-url and --function (its outputs)`,
    );
  // The local engines: DynamoDB Local (its streams), the fauxqs queues, the runtime's Invoke API.
  const local = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const sqs = new SQSClient({ ...local, endpoint: running.sqs });
  const streams = new DynamoDBStreamsClient({ ...local, endpoint: running.dynamodb });
  const lambda = new LambdaClient({ ...local, endpoint: running.lambda });
  const ports: ReplayPorts = {
    receive: receiveFrom(sqs, running.streamFailures),
    readRange: (info) => readStreamRange(streams, info),
    record: invokeRecorder(lambda, 'EventRecorder'),
  };
  return {
    ports,
    close: () => {
      for (const client of [sqs, streams, lambda]) client.destroy();
    },
  };
};

const replay = async (args: string[], io: Io) => {
  const options = {
    'queue-url': { type: 'string' },
    function: { type: 'string' },
    region: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  } as const;
  const { values } = parseOptions(args, options, 0);
  if (values.help) return void io.out(HELP.replay);
  const { ports, close } = replayPorts(values, io);
  try {
    const report = await replayFailed(ports);
    if (values.json) io.out(JSON.stringify(report, null, 2));
    else {
      io.out(`${report.replayed} batches replayed (${report.records} records handed to the event recorder)`);
      for (const kept of report.kept)
        io.out(`kept: ${kept.shardId ? `shard ${kept.shardId} ${kept.range}: ` : ''}${kept.reason}`);
    }
    return report.kept.length ? 1 : 0;
  } finally {
    close();
  }
};

export const main = tool('events', HELP.main, { list, show, endpoints, 'replay-failed': replay });

runAsMain(import.meta.url, main);
