import { tapLines } from '../run-logs.js';

/**
 * The service's log as the test's process sees it: every JSON line written to stdout or stderr
 * (Powertools writes warnings and errors to stderr; functions write there whether they run in this
 * thread or in worker threads piped to it), parsed. Lines that are not JSON objects are skipped.
 */
export interface CapturedLog {
  /** Every JSON line written since the capture started. */
  lines(): Record<string, any>[];
  /** EMF lines (CloudWatch embedded metric format): those with an `_aws` key. */
  metrics(): Record<string, any>[];
  stop(): void;
}

export const captureLog = (): CapturedLog => {
  const parsed: Record<string, any>[] = [];
  const tap = (stream: NodeJS.WriteStream) =>
    tapLines(stream, (lines, write, chunk, rest) => {
      for (const line of lines) {
        if (!line.trim().startsWith('{')) continue;
        try {
          parsed.push(JSON.parse(line));
        } catch {
          // not a log line of the service
        }
      }
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    });
  const untap = [tap(process.stdout), tap(process.stderr)];
  return {
    lines: () => [...parsed],
    metrics: () => parsed.filter((line) => line._aws),
    stop: () => {
      for (const restore of untap) restore();
    },
  };
};

/** The values one metric took across EMF lines (a line may carry several metrics, or a list of values). */
export const metricValues = (lines: Record<string, any>[], name: string): number[] =>
  lines
    .filter((line) => line._aws.CloudWatchMetrics.some((m: any) => m.Metrics.some((d: any) => d.Name === name)))
    .flatMap((line) => (Array.isArray(line[name]) ? line[name] : [line[name]]));
