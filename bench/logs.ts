/**
 * What the functions log, in bytes, as CloudWatch Logs would ingest it: every line the local runtime's
 * execution environments write (worker threads, whose output reaches this process's stdout and stderr)
 * that is one of the service's JSON lines: Powertools Logger's (by `level`) or an EMF metrics line
 * (`_aws`). CloudWatch bills each event's bytes plus 26 bytes of its own (`EVENT_OVERHEAD_BYTES`).
 *
 * Only lines written while `counting()` says so are counted; the functions' lines are kept off the
 * terminal (they are the measurement, not the bench's output) unless they are errors.
 */

/** What CloudWatch Logs adds to each event's bytes when it bills ingestion. */
export const EVENT_OVERHEAD_BYTES = 26;

export interface LogCount {
  /** Bytes (with the per-event overhead) and lines by level: INFO, WARN, ERROR…, and `EMF` for metrics lines. */
  byLevel: Map<string, { lines: number; bytes: number }>;
  /** Bytes by the function that logged them (Powertools' `function_name`; EMF lines carry none). */
  byFunction: Map<string, number>;
  /** The metric series the EMF lines made: `<name> <dimension=value,…>`, each a custom metric. */
  metrics: Set<string>;
}

type Emf = { CloudWatchMetrics?: { Dimensions?: string[][]; Metrics?: { Name: string }[] }[] };
const parse = (line: string) => {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as { level?: string; _aws?: Emf; function_name?: string } & Record<string, unknown>;
  } catch {
    return undefined;
  }
};
const classify = (parsed: ReturnType<typeof parse>): string | undefined => {
  if (parsed?._aws) return 'EMF';
  if (typeof parsed?.level === 'string') return parsed.level;
  return undefined;
};
const metricSeries = (parsed: NonNullable<ReturnType<typeof parse>>) =>
  (parsed._aws?.CloudWatchMetrics ?? []).flatMap((d) =>
    (d.Metrics ?? []).flatMap((metric) =>
      (d.Dimensions ?? [[]]).map((dims) => `${metric.Name} ${dims.map((k) => `${k}=${parsed[k]}`).join(',')}`),
    ),
  );

/** One function's log line counted: its level's lines and bytes, its function's bytes, its metric series. */
const countLine = (count: LogCount, line: string, parsed: NonNullable<ReturnType<typeof parse>>, level: string) => {
  const bytes = Buffer.byteLength(line) + EVENT_OVERHEAD_BYTES;
  const entry = count.byLevel.get(level) ?? { lines: 0, bytes: 0 };
  entry.lines++;
  entry.bytes += bytes;
  count.byLevel.set(level, entry);
  if (parsed.function_name)
    count.byFunction.set(parsed.function_name, (count.byFunction.get(parsed.function_name) ?? 0) + bytes);
  if (level === 'EMF') for (const series of metricSeries(parsed)) count.metrics.add(series);
};

export const captureFunctionLogs = (counting: () => boolean) => {
  const count: LogCount = { byLevel: new Map(), byFunction: new Map(), metrics: new Set() };
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write.bind(stream));
  const pending = ['', ''];

  streams.forEach((stream, i) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = pending[i] + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const lines = text.split('\n');
      const partial = lines.pop() ?? '';
      // A partial line of the bench's own (a progress line) goes out at once; a function's JSON waits for its end.
      pending[i] = partial.startsWith('{') ? partial : '';
      const shown: string[] = [];
      for (const line of lines) {
        const parsed = parse(line);
        const level = classify(parsed);
        if (parsed && level && counting()) countLine(count, line, parsed, level);
        if (!level || level === 'ERROR' || level === 'CRITICAL') shown.push(line);
      }
      const out = (shown.length ? `${shown.join('\n')}\n` : '') + (partial.startsWith('{') ? '' : partial);
      return out ? (originals[i] as (c: string, ...r: unknown[]) => boolean)(out, ...rest) : true;
    }) as typeof stream.write;
  });

  return {
    count,
    stop: () =>
      streams.forEach((stream, i) => {
        stream.write = originals[i] as typeof stream.write;
      }),
  };
};
