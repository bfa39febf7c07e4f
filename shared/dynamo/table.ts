import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../core/config.js';
import { InvalidCursorError } from '../core/errors.js';
import { entrySortKey, INDEX, INDEX_KEYS, type IndexRole, type Key, listSortKey } from './keys.js';

export type Item = Record<string, unknown>;

export const TABLE = () => config.tableName();

/** A conditional write whose condition did not hold: a domain outcome, not a fault. */
export const isConditionFailure = (error: unknown) => (error as Error)?.name === 'ConditionalCheckFailedException';

/**
 * One item by key, converted by its record module's `…From`; undefined when there is none.
 * `only`: the attributes to read, when the caller needs a few of a large item.
 */
export const getItem = async <T>(
  key: Key,
  from: (item: Item) => T,
  consistent = false,
  only?: string[],
): Promise<T | undefined> => {
  const projection = only?.length
    ? {
        ProjectionExpression: only.map((_, i) => `#p${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(only.map((attribute, i) => [`#p${i}`, attribute])),
      }
    : {};
  const out = await dynamo.send(
    new GetCommand({ TableName: TABLE(), Key: key, ConsistentRead: consistent, ...projection }),
  );
  return out.Item ? from(out.Item) : undefined;
};

/** Read units a caller wants counted (DynamoDB's own figure, `ReturnConsumedCapacity: TOTAL`). */
export interface ReadMeter {
  readUnits: number;
}

const metered = (meter: ReadMeter | undefined) => (meter ? { ReturnConsumedCapacity: 'TOTAL' as const } : {});
const count = (
  meter: ReadMeter | undefined,
  consumed: { CapacityUnits?: number }[] | { CapacityUnits?: number } = [],
) => {
  if (meter) for (const c of [consumed].flat()) meter.readUnits += c.CapacityUnits ?? 0;
};

/** Reads items by key, in the order of the keys; missing ones are skipped. Retries unprocessed keys. */
export const batchGet = async <T>(keyList: Key[], from: (item: Item) => T, meter?: ReadMeter): Promise<T[]> => {
  const found = new Map<string, Item>();
  for (let i = 0; i < keyList.length; i += 100) {
    let pending: Key[] | undefined = keyList.slice(i, i + 100).map((k) => ({ PK: k.PK, SK: k.SK }));
    for (let attempt = 0; pending?.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
      const out: BatchGetCommandOutput = await dynamo.send(
        new BatchGetCommand({ RequestItems: { [TABLE()]: { Keys: pending } }, ...metered(meter) }),
      );
      count(meter, out.ConsumedCapacity);
      for (const item of out.Responses?.[TABLE()] ?? []) found.set(`${item.PK}|${item.SK}`, item);
      pending = out.UnprocessedKeys?.[TABLE()]?.Keys?.map(keyOf);
    }
  }
  return keyList.flatMap((k) => {
    const item = found.get(`${k.PK}|${k.SK}`);
    return item ? [from(item)] : [];
  });
};

/** The table key of an item or of an index entry (index entries carry the table's keys too). */
export const keyOf = (item: Item): Key => ({ PK: String(item.PK), SK: String(item.SK) });

/**
 * The parts of an UpdateItem that set attributes to values (and remove others), built by the one
 * builder (`UpdateBuilder`, below): each name and value through a numbered placeholder, so no
 * reserved word or index attribute is ever spelled in it.
 */
export const updateSet = (set: Record<string, unknown>, remove: string[] = []) => {
  const update = new UpdateBuilder();
  Object.entries(set).forEach(([attribute, value], i) => {
    update.set(update.name(attribute, `#s${i}`), `s${i}`, value);
  });
  remove.forEach((attribute, i) => {
    update.remove(update.name(attribute, `#r${i}`));
  });
  const { UpdateExpression, ExpressionAttributeNames, ExpressionAttributeValues } = update.build({ PK: '', SK: '' });
  return {
    UpdateExpression,
    ExpressionAttributeNames,
    ...(Object.keys(set).length ? { ExpressionAttributeValues } : {}),
  };
};

/** One Query page over an index, newest first, of the keys below `before` (exclusive). */
export const queryKeys = async (input: {
  index: IndexRole;
  pk: string;
  before?: string;
  after?: string;
  limit: number;
  exclusiveStartKey?: Item;
  forward?: boolean;
  meter?: ReadMeter;
}) => {
  const conditions = [`#pk = :pk`];
  const values: Item = { ':pk': input.pk };
  if (input.before !== undefined && input.after !== undefined) {
    conditions.push('#sk BETWEEN :after AND :before');
    values[':before'] = input.before;
    values[':after'] = input.after;
  } else if (input.before !== undefined) {
    conditions.push('#sk < :before');
    values[':before'] = input.before;
  }
  const out = await dynamo.send(
    new QueryCommand({
      TableName: TABLE(),
      IndexName: INDEX[input.index],
      KeyConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: {
        '#pk': INDEX_KEYS[input.index].pk,
        ...(conditions.length > 1 ? { '#sk': INDEX_KEYS[input.index].sk } : {}),
      },
      ExpressionAttributeValues: values,
      ScanIndexForward: input.forward ?? false,
      Limit: input.limit,
      ExclusiveStartKey: input.exclusiveStartKey,
      ...metered(input.meter),
    }),
  );
  count(input.meter, out.ConsumedCapacity);
  return {
    keys: (out.Items ?? []).map(keyOf),
    /** Each key's sort key in the index, in the same order. */
    sortKeys: (out.Items ?? []).map((item) => String(item[INDEX_KEYS[input.index].sk])),
    lastKey: out.LastEvaluatedKey,
  };
};

/**
 * Up to `limit` entries of one index partition, newest first: those whose sort key starts with
 * `prefix` and, when `before` is given, sorts below `<prefix><before>`. Entries of a KEYS_ONLY
 * index carry the table's keys (`keyOf`) and serve as an `exclusiveStartKey`.
 */
export const queryIndex = async (input: {
  /** `table`: the table's own partition (`PK`, sorted by `SK`). */
  index: IndexRole | 'table';
  partition: string;
  prefix?: string;
  before?: string;
  /** Only entries whose sort key is at least this (a time range's start); not with a prefix. */
  atLeast?: string;
  /** Absent: one page, as much as DynamoDB answers (1 MB). */
  limit?: number;
  exclusiveStartKey?: Item;
  /** Oldest (lowest sort key) first; newest first by default. */
  forward?: boolean;
}): Promise<Item[]> => {
  const { pk, sk } = input.index === 'table' ? { pk: 'PK', sk: 'SK' } : INDEX_KEYS[input.index];
  if (input.prefix && input.atLeast !== undefined) throw new Error('queryIndex: a prefix and atLeast do not combine');
  const prefix = input.prefix ?? '';
  const low = prefix || input.atLeast;
  const values: Item = { ':pk': input.partition };
  let range: string | undefined;
  // One condition may bound a sort key: with a prefix (or a lower bound), BETWEEN is the one that also
  // bounds it above, and it includes the bound itself, so one more entry is asked for and the bound dropped.
  const bound = input.before === undefined ? undefined : `${prefix}${input.before}`;
  if (bound !== undefined && low) {
    range = '#sk BETWEEN :prefix AND :bound';
    Object.assign(values, { ':prefix': low, ':bound': bound });
  } else if (input.atLeast !== undefined) {
    range = '#sk >= :prefix';
    values[':prefix'] = input.atLeast;
  } else if (bound !== undefined) {
    range = '#sk < :bound';
    values[':bound'] = bound;
  } else if (prefix) {
    range = 'begins_with(#sk, :prefix)';
    values[':prefix'] = prefix;
  }
  const out = await dynamo.send(
    new QueryCommand({
      TableName: TABLE(),
      IndexName: input.index === 'table' ? undefined : INDEX[input.index],
      KeyConditionExpression: range ? `#pk = :pk AND ${range}` : '#pk = :pk',
      ExpressionAttributeNames: { '#pk': pk, ...(range ? { '#sk': sk } : {}) },
      ExpressionAttributeValues: values,
      ScanIndexForward: input.forward ?? false,
      Limit: input.limit !== undefined && bound !== undefined && low ? input.limit + 1 : input.limit,
      ExclusiveStartKey: input.exclusiveStartKey,
    }),
  );
  const items = out.Items ?? [];
  return (bound === undefined ? items : items.filter((entry) => entry[sk] !== bound)).slice(0, input.limit);
};

/**
 * TransactWriteItems, tried again when DynamoDB cancelled it only because another transaction held
 * one of its items at that moment (`TransactionConflict`); a failed condition is the caller's to read.
 */
export const transactWrite = async (items: NonNullable<TransactWriteCommandInput['TransactItems']>) => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
      const onlyConflict =
        reasons.some((r) => r.Code === 'TransactionConflict') &&
        !reasons.some((r) => r.Code === 'ConditionalCheckFailed');
      if (!onlyConflict || attempt === 3) throw error;
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 30));
    }
  }
};

// ---------- conditional writes that answer the item they met

/**
 * A conditional write whose condition did not hold, with the item it met: DynamoDB answers it
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), so the writer needs no second read. `met` is
 * undefined when there was no item, or when the answer carried none (a stand-in that ignores the
 * option): the writer then reads (`withRereads`, core/concurrency.ts, is the one place that does).
 */
export class ConditionFailed {
  constructor(readonly met: Item | undefined) {}
}

/** The item an error carries, as the document client would have answered it (errors are not converted). */
const itemOf = (raw: unknown): Item | undefined => {
  if (!raw || typeof raw !== 'object') return undefined;
  const item = raw as Record<string, unknown>;
  // Table keys are strings: a key that is an object is still in DynamoDB's wire form.
  return typeof item.PK === 'object' ? unmarshall(item as Parameters<typeof unmarshall>[0]) : item;
};

const ALL_OLD = { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };

/**
 * Puts `item` on a condition (default: no item at its key; null: none), with its values and names;
 * the item met when the condition failed.
 */
export const putIf = async (
  item: Item,
  condition: string | null = 'attribute_not_exists(PK)',
  values?: Item,
  names?: Record<string, string>,
): Promise<true | ConditionFailed> => {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: TABLE(),
        Item: item,
        ...(condition === null ? {} : { ConditionExpression: condition, ...ALL_OLD }),
        ...(values ? { ExpressionAttributeValues: values } : {}),
        ...(names ? { ExpressionAttributeNames: names } : {}),
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return new ConditionFailed(itemOf((error as { Item?: unknown }).Item));
    throw error;
  }
};

/** The parts of a conditional UpdateItem (dynamo/table.ts builds them), without the table name. */
export interface UpdateParts {
  Key: Key;
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/**
 * Runs an UpdateItem; with `returnNew`, the item after it (undefined when none came back), or the
 * item its condition met.
 */
export const updateIf = async (parts: UpdateParts, returnNew = false): Promise<Item | undefined | ConditionFailed> => {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        ...parts,
        ...(returnNew ? { ReturnValues: 'ALL_NEW' as const } : {}),
        ...ALL_OLD,
      }),
    );
    return out.Attributes;
  } catch (error) {
    if (isConditionFailure(error)) return new ConditionFailed(itemOf((error as { Item?: unknown }).Item));
    throw error;
  }
};

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Each write of a transaction answers the item its condition met, should one fail. */
const answeringMet = (item: TransactItem): TransactItem => {
  if (item.Put) return { ...item, Put: { ...item.Put, ...ALL_OLD } };
  if (item.Update) return { ...item, Update: { ...item.Update, ...ALL_OLD } };
  if (item.Delete) return { ...item, Delete: { ...item.Delete, ...ALL_OLD } };
  if (item.ConditionCheck) return { ...item, ConditionCheck: { ...item.ConditionCheck, ...ALL_OLD } };
  return item;
};

/**
 * A transaction of conditional writes: true, or, when a condition failed, the item each write met
 * (by position; undefined where there was none, or none was answered).
 */
export const transactIf = async (
  items: TransactItem[],
): Promise<true | { met: (Item | undefined)[]; failed: boolean[] }> => {
  try {
    await transactWrite(items.map(answeringMet));
    return true;
  } catch (error) {
    if (!(error instanceof TransactionCanceledException) && !isConditionFailure(error)) throw error;
    const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    return {
      met: items.map((_, i) => itemOf(reasons[i]?.Item)),
      // Which writes' conditions failed (by position): the others were cancelled with them.
      failed: items.map((_, i) => reasons[i]?.Code === 'ConditionalCheckFailed'),
    };
  }
};

/**
 * Every item of one partition (those whose sort key starts with `prefix`, when given), read
 * consistently unless told otherwise, page after page: an order's partition, a supplier order's kept
 * fulfillments, a few items.
 */
export const queryPartition = async (pk: string, prefix?: string, consistent = true): Promise<Item[]> => {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: prefix === undefined ? 'PK = :pk' : 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ...(prefix === undefined ? {} : { ':prefix': prefix }) },
        ConsistentRead: consistent,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page?.Items ?? []));
    startKey = page?.LastEvaluatedKey;
  } while (startKey);
  return items;
};

/** One page of a consistent Scan of the table (the index backfill's). */
export const scanPage = async (startKey: Item | undefined, limit?: number) => {
  const page = await dynamo.send(
    new ScanCommand({ TableName: TABLE(), ExclusiveStartKey: startKey, ConsistentRead: true, Limit: limit }),
  );
  return { items: page.Items ?? [], lastKey: page.LastEvaluatedKey };
};

/** A transaction's conditional Put (an audit entry's, say) written alone; the item it met when it was there. */
export const putAlone = (write: { Put: { Item: Item; ConditionExpression?: string } }) =>
  putIf(write.Put.Item, write.Put.ConditionExpression);

/** Deletes the item at `key`, whatever it is (a released kept fulfillment). */
export const deleteItem = async (key: Key) => {
  await dynamo.send(new DeleteCommand({ TableName: TABLE(), Key: key }));
};

/** One client per container; the endpoint comes from AWS_ENDPOINT_URL_DYNAMODB locally. */
export const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});

/**
 * Typed reads of an item's attributes, for the record modules' `…From(item)` conversions. A
 * missing or mistyped attribute is a corrupt item: the error names the entity and the attribute,
 * never the value (it may be a secret's ciphertext).
 */
export const attributes = (item: Item, entity: string) => {
  /** The attribute when `ok` says it has the wanted type; a corrupt item otherwise. */
  const read = <T>(name: string, ok: (value: unknown) => boolean): T => {
    const value = item[name];
    if (ok(value)) return value as T;
    throw new Error(`corrupt ${entity} item: attribute ${name} is missing or of the wrong type`);
  };
  const isString = (value: unknown) => typeof value === 'string';
  const isObject = (value: unknown) => typeof value === 'object' && value !== null;
  const absent = (value: unknown) => value === undefined || value === null;
  return {
    string: (name: string) => read<string>(name, isString),
    /** Null when absent: attributes written as null, or not written by older code. */
    stringOrNull: (name: string) => read<string | null>(name, (value) => absent(value) || isString(value)) ?? null,
    number: (name: string) => read<number>(name, (value) => typeof value === 'number'),
    /** One of a fixed set of strings (a status, a platform). */
    oneOf: <T extends string>(name: string, allowed: readonly T[]) =>
      read<T>(name, (value) => allowed.includes(value as T)),
    /**
     * A map or list this service wrote itself (an order, a pricing config, tracking): checked to
     * be an object, its shape trusted to be what the record's own writer put there.
     */
    object: <T extends object>(name: string) => read<T>(name, isObject),
    optionalObject: <T extends object>(name: string) =>
      read<T | null>(name, (value) => absent(value) || isObject(value)) ?? undefined,
  };
};

/** The names of `R`'s fields of type `T` (exactly: a `string` field is not a `string | null` one, nor optional). */
type FieldsOf<R, T> = {
  [K in keyof R]-?: [R[K]] extends [T] ? ([T] extends [R[K]] ? K : never) : never;
}[keyof R];
/** The names of `R`'s fields of type `T | null`, optional or not (an absent attribute reads as null). */
type NullableFieldsOf<R, T> = {
  [K in keyof R]-?: [Exclude<R[K], undefined>] extends [T | null]
    ? [T | null] extends [Exclude<R[K], undefined>]
      ? K
      : never
    : never;
}[keyof R];
/** The names of `R`'s fields that hold a map or a list: never absent, or (`nullable`) null for none, or absent. */
type ObjectFieldsOf<R, nullable extends boolean> = {
  [K in keyof R]-?: nullable extends true
    ? null extends R[K]
      ? [Exclude<R[K], null | undefined>] extends [object]
        ? K
        : never
      : never
    : [R[K]] extends [object]
      ? K
      : never;
}[keyof R];

/**
 * A record's attributes by kind, each named once, as its item carries them under the same names:
 * each read as `attributes` reads its kind (`oneOf`: the values allowed).
 */
export interface RecordFields<R> {
  strings?: readonly FieldsOf<R, string>[];
  nullableStrings?: readonly NullableFieldsOf<R, string>[];
  numbers?: readonly FieldsOf<R, number>[];
  nullableNumbers?: readonly NullableFieldsOf<R, number>[];
  objects?: readonly ObjectFieldsOf<R, false>[];
  optionalObjects?: readonly ObjectFieldsOf<R, true>[];
  oneOf?: { readonly [K in keyof R]?: readonly R[K][] };
}
/** The fields `S` names; what a record has beyond them fails the `recordShape` call to compile. */
type Named<S> = { [P in keyof S]-?: S[P] extends readonly (infer K)[] ? K : keyof S[P] }[keyof S];
type Unnamed<R, S> = Exclude<keyof R, Named<S>>;

/**
 * The conversions of a record whose fields are its item's attributes: `from` reads an item into the
 * record (a corrupt item throws, as `attributes`), `fields` copies the record's own fields for its
 * item (nothing else the object carries). `R` is the record (or the part of it so stored); every
 * field of it is named in `fields`, or the call fails to compile.
 */
export const recordShape =
  <R>() =>
  <const S extends RecordFields<R>>(
    entity: string,
    fields: S & ([Unnamed<R, S>] extends [never] ? unknown : { unnamed: Unnamed<R, S> }),
  ) => {
    type Kind = keyof RecordFields<R>;
    const allowed = (fields.oneOf ?? {}) as Record<string, readonly string[]>;
    const named = (Object.entries(fields) as [Kind, readonly string[]][]).flatMap(([kind, list]) =>
      (kind === 'oneOf' ? Object.keys(allowed) : list).map((name) => [kind, name] as const),
    );
    const readField = (item: Item, read: ReturnType<typeof attributes>, kind: Kind, name: string): unknown => {
      if (kind === 'oneOf') return read.oneOf(name, allowed[name]);
      if (kind === 'strings') return read.string(name);
      if (kind === 'nullableStrings') return read.stringOrNull(name);
      if (kind === 'numbers') return read.number(name);
      if (kind === 'nullableNumbers') return item[name] == null ? null : read.number(name);
      if (kind === 'objects') return read.object(name);
      return read.optionalObject(name) ?? null;
    };
    return {
      from: (item: Item): R => {
        const read = attributes(item, entity);
        return Object.fromEntries(named.map(([kind, name]) => [name, readField(item, read, kind, name)])) as R;
      },
      fields: (record: R): Item =>
        Object.fromEntries(named.map(([, name]) => [name, (record as Record<string, unknown>)[name]])),
    };
  };

/**
 * One conditional UpdateItem, built clause by clause: the table's builder, which the job item's
 * one builder (`JobUpdate`, shared/order-flow/order-repository.ts) and the index backfill extend.
 * Every attribute name goes through a placeholder (`status`, `url` and friends are reserved words):
 * `#<attribute>` by default, or one the caller chooses; every value is `:<label>`.
 */
export class UpdateBuilder {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};

  /** `#<attribute>` (or `placeholder`) for an attribute, declared on first use. */
  name(attribute: string, placeholder = `#${attribute}`) {
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(label: string, v: unknown) {
    this.values[`:${label}`] = v;
    return `:${label}`;
  }

  /** `path = :label`. */
  set(path: string, label: string, v: unknown) {
    this.sets.push(`${path} = ${this.value(label, v)}`);
    return this;
  }

  /** `#attribute = :attribute` for each entry. */
  setAttributes(attributes: Record<string, unknown>) {
    for (const [attribute, v] of Object.entries(attributes)) this.set(this.name(attribute), attribute, v);
    return this;
  }

  /** `path = <expression>`: an expression of the item's own attributes (`if_not_exists`, a sum). */
  setTo(path: string, expression: string) {
    this.sets.push(`${path} = ${expression}`);
    return this;
  }

  remove(...paths: string[]) {
    for (const path of paths) if (!this.removes.includes(path)) this.removes.push(path);
    return this;
  }

  /** The index attributes a change sets and removes (the entity modules' `IndexChanges`). */
  index(changes: { set: Record<string, string>; remove: string[] }) {
    this.setAttributes(changes.set);
    return this.remove(...changes.remove.map((attribute) => this.name(attribute)));
  }

  when(condition: string) {
    this.conditions.push(condition);
    return this;
  }

  /** The UpdateItem's parts, without the table name (the caller's adapter adds it). */
  build(key: { PK: string; SK: string }) {
    const clauses = [
      ...(this.sets.length ? [`SET ${this.sets.join(', ')}`] : []),
      ...(this.removes.length ? [`REMOVE ${this.removes.join(', ')}`] : []),
    ];
    return {
      Key: key,
      UpdateExpression: clauses.join(' '),
      ...(this.conditions.length ? { ConditionExpression: this.conditions.join(' AND ') } : {}),
      ExpressionAttributeNames: this.names,
      ExpressionAttributeValues: this.values,
    };
  }
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** What a list needs of its records: the cursor's position, and the owner every list is scoped to. */
interface Listed {
  /** The id in the record's sort key, unless its list names another (`ListRequest.idOf`). */
  id?: string;
  createdAt: string;
  ownerId: string;
}

/**
 * Where a list's entries are: partitions of an index, each sorted by `<prefix><createdAt>#<id>`: one,
 * or the shards of a list a busy owner writes at the order rate (keys.ts `LIST_SHARDS`), which a
 * page reads together and merges. `exact` sources hold just the list's items (a partition per
 * filter); the others hold a superset whose non-matching entries are few in practice
 * (docs/performance.md, "Lists"), and a page filters the items it loads.
 */
export interface ListSource {
  /** The index by its role in keys.ts. */
  index: IndexRole;
  /** The list's partitions: one, or every shard of it (`ShardedList.all()`). */
  partitions: readonly string[];
  /** A sort-key prefix within the partition; none for the list indexes. */
  prefix?: string;
  exact: boolean;
  /**
   * An inexact source that is small (an owner's jobs in flight) and whose matches may be sparse in
   * it: a page loads up to 100 of its items rather than a few more than `limit`.
   */
  small?: boolean;
  /**
   * The item a page loads for an entry, when the entry is another item's than the record listed
   * (an order's mark names its order's record: shared/order-flow/order-sync-job.ts); the entry's own by default.
   */
  recordKeyOf?: (entry: Key) => Key;
}

export interface ListRequest<T extends Listed> {
  source: ListSource;
  ownerId: string;
  /** The record module's conversion of a loaded item. */
  from: (item: Item) => T;
  /** The id in a record's sort key, when it is not its `id` (an order's is its first job's). */
  idOf?: (record: T) => string;
  limit: number;
  startingAfter?: string;
  /** Loads the item a cursor names, or undefined when it was never in this list (another owner's, say). */
  cursorItem: (id: string) => Promise<T | undefined>;
  /**
   * Whether a loaded item belongs on the page, as it is now: the filters an inexact source
   * leaves to the page, and for every source the item's current state (an index entry can
   * outlive, for a moment, the state that put it there).
   */
  matches?: (item: T) => boolean;
}

/** BatchGetItem takes at most 100 keys: the most items one page may load. */
const MAX_LOADED = 100;

/** What an inexact source loads beyond `limit + 1`, for the entries a page drops. */
const slack = (limit: number) => Math.max(2, Math.ceil(limit / 4));

/**
 * The newest `limit` entries below `before` of a source's partitions: one Query per partition, in
 * parallel, each of at most `limit` entries (all of a page's may be in one shard), merged by sort
 * key. For a sharded list this reads `shards × limit` keys at most: a page's cost grows with the
 * shards and the page, never with the list's length.
 */
const newestEntries = async (source: ListSource, before: string | undefined, limit: number) => {
  const queries = source.partitions.map((partition) =>
    queryIndex({ index: source.index, partition, prefix: source.prefix, before, limit }),
  );
  const all = (await Promise.all(queries)).flat();
  if (source.partitions.length === 1) return all;
  const sortKey = (entry: Item) => entrySortKey(source.index, entry);
  return all.sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : sortKey(a) > sortKey(b) ? -1 : 0)).slice(0, limit);
};

/**
 * Cursor pagination for every list (SPEC 8.1, CONTRACT.md §8): newest first by (createdAt, id),
 * as every list index sorts by `<createdAt>#<id>`. The cursor is the last item's id; its sort key
 * bounds the Query, so items sharing a timestamp are neither skipped nor repeated, items created
 * meanwhile never shift later pages, and a cursor item deleted (or moved out of a filtered list)
 * since still marks its place.
 *
 * A page is at most three round trips: the cursor's GetItem, the Queries for the keys (one per
 * partition, side by side; one more entry than the page loads, to tell `has_more`) and one BatchGet
 * of at most `limit` items (`limit + 1 + slack` for an inexact source, up to 100 for a small one),
 * whatever the list's length. It may hold fewer than `limit`
 * items when some loaded ones do not match: `has_more` still says whether the list goes on. Only
 * when not one loaded item matches while the list goes on does the page read on, so a page is
 * never empty with `has_more` true (docs/design.md, "Lists").
 */
export const listPage = async <T extends Listed>(request: ListRequest<T>): Promise<Page<T>> => {
  const { source, limit } = request;
  const recordKeyOf = source.recordKeyOf ?? ((entry: Key) => entry);
  let before: string | undefined;
  if (request.startingAfter !== undefined) {
    const cursor = await request.cursorItem(request.startingAfter);
    if (!cursor) throw new InvalidCursorError();
    const id = request.idOf ? request.idOf(cursor) : cursor.id;
    if (id === undefined) throw new Error('a listed record without an id: its list names one with idOf');
    before = listSortKey(cursor.createdAt, id);
  }

  const loads = source.exact ? limit : source.small ? MAX_LOADED : Math.min(MAX_LOADED, limit + 1 + slack(limit));
  const matches = request.matches ?? (() => true);
  const data: T[] = [];
  for (;;) {
    const entries = await newestEntries(source, before, loads + 1);
    const loaded = entries.slice(0, loads);
    const items = await batchGet(
      loaded.map((entry) => recordKeyOf(keyOf(entry))),
      request.from,
    );
    // A store's or a resource's partition holds one owner's items: one of another owner's means
    // the caller named a store or resource that is not theirs.
    if (items.some((item) => item.ownerId !== request.ownerId)) return { data: [], hasMore: false };
    data.push(...items.filter(matches));
    const more = entries.length > loads;
    if (data.length > limit) return { data: data.slice(0, limit), hasMore: true };
    if (data.length > 0 || !more) return { data, hasMore: more };
    // Read on below the last entry loaded, in every partition (its sort key without the prefix).
    const last = loaded.at(-1);
    if (!last) return { data, hasMore: false };
    before = entrySortKey(source.index, last).slice(source.prefix?.length ?? 0);
  }
};
