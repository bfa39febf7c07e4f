/**
 * What one `bench:cost` run measured, per order, as it writes it for `bench:monthly` (and the README's
 * monthly figures, test/cdk/monthly.test.ts): nothing in it is typed in by hand.
 */

/** Where `bench:cost` writes its measurement (relative to the project root; not in git). */
export const COST_MEASUREMENT_RUN = '.local/bench/cost.json';

/**
 * The measurement README.md's figures were computed from, kept in git: `bench:monthly -- --write` copies
 * the one it used here (a test run of `bench:cost` never changes it).
 */
export const COST_MEASUREMENT = 'bench/measured/cost.json';

export interface CostMeasurement {
  measuredAt: string;
  command: string;
  node: string;
  /** The machine's 1-minute load average at the end: durations on a loaded machine are longer. */
  loadAverage: number;
  /** The machine's cores: with the load average, how much of a core an invocation got. */
  cores: number;
  memoryMb: number;
  orders: number;
  completed: number;
  perOrder: {
    httpRequests: number;
    /** Write units, events and tags on, failed conditional writes at 1 unit. */
    wru: number;
    rru: number;
    /** Billable SQS requests by action (long polls that returned nothing left out). */
    sqs: Record<string, number>;
    /** KMS requests by function, with the cache as deployed, over the run's execution environments. */
    kms: Record<string, number>;
    platformCalls: { supplier: number; reseller: number };
    /** Bytes logged by level (`EMF` for the metrics lines), with CloudWatch's 26 bytes an event. */
    logBytes: Record<string, number>;
    /** Of those, the bytes each function's Powertools lines took (EMF lines apart). */
    logBytesByFunction: Record<string, number>;
    /** What the table grew by: items (+100 bytes each), and index entries (+100 bytes each). */
    storedBytes: number;
    indexBytes: number;
  };
  /** The custom metric series the run's EMF lines made (`<name> <dimensions>`), each billed as one a month. */
  emfMetrics: string[];
  /** Per function of the order's path: invocations per order, records per batch, billed ms. */
  functions: Record<
    string,
    {
      invocations: number;
      recordsPerInvocation: number;
      billedMsMedian: number;
      billedMsMean: number;
      /** The fastest tenth's bound: on a loaded machine, the closest to an unloaded invocation. */
      billedMsP10: number;
    }
  >;
  /** One delivery to one endpoint (phase 4), per delivery less per order without one. */
  delivery: {
    deliveries: number;
    wru: number;
    /**
     * Of `wru`, the units reported for transactions (DynamoDB Local reports one an item, AWS bills two):
     * billed once more. Absent from an older measurement: all of `wru` is then billed twice.
     */
    transactionalWru?: number;
    rru: number;
    lambdaRequests: number;
    sqsRequests: number;
    kmsRequests: number;
    logBytes: number;
    workerBilledMs: number;
    workerBilledMsP10: number;
  } | null;
}

/** Nearest-rank percentile (p in 0..100); 0 for none. */
export const percentileOf = (values: number[], p: number) => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

export const medianOf = (values: number[]) => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
