import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** One request to DynamoDB: its operation (`Query`, `BatchGetItem`…) and the read or write units it consumed. */
export interface RoundTrip {
  operation: string;
  units: number;
}

type Consumed = { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;

/**
 * Records every request a document client sends while recording is on, with the capacity it
 * consumed (it asks each one for `ReturnConsumedCapacity: TOTAL`). For `bench:lists` and the list
 * tests, which call shared/'s list functions in their own process with the shared client: the
 * SDK middleware sees each request, retries of unprocessed keys included.
 */
export const recordRoundTrips = (client: DynamoDBDocumentClient) => {
  let trips: RoundTrip[] | undefined;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!trips) return next(args);
      const recording = trips;
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: Consumed }).ConsumedCapacity;
      const units = [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
      recording.push({ operation: context.commandName?.replace(/Command$/, '') ?? 'unknown', units });
      return result;
    },
    { step: 'initialize', name: 'recordRoundTrips', override: true },
  );
  return {
    /** Runs `work` and answers what it sent. Not for overlapping calls: one recording at a time. */
    async during<T>(work: () => Promise<T>): Promise<{ result: T; trips: RoundTrip[] }> {
      if (trips) throw new Error('a recording is already running');
      trips = [];
      try {
        const result = await work();
        return { result, trips };
      } finally {
        trips = undefined;
      }
    },
  };
};

/** How many round trips of each operation, e.g. `{ GetItem: 1, Query: 1, BatchGetItem: 1 }`. */
export const countByOperation = (trips: RoundTrip[]) =>
  trips.reduce<Record<string, number>>((counts, t) => {
    counts[t.operation] = (counts[t.operation] ?? 0) + 1;
    return counts;
  }, {});

export const readUnits = (trips: RoundTrip[]) => trips.reduce((sum, t) => sum + t.units, 0);
