import { type ApiClient, deadJobRetryKey, unwrap, waitingOutRateLimits } from '../client/client.js';
import type { Job } from './types.js';

/**
 * The console's bulk retry, without its page (console/bulk.ts): each dead job retried one after the
 * other with the key `npm run jobs -- retry --all-dead` sends (`deadJobRetryKey`), so the two never
 * retry one death twice, and a retry answered `429 rate_limited` sent again once its `Retry-After`
 * has passed, as that command does. Answers the failures, one line each.
 */
export const retryDeadJobs = async (
  client: ApiClient,
  jobs: Job[],
  progress: (text: string) => void,
  sleep?: (ms: number) => Promise<void>,
) => {
  const failures: string[] = [];
  for (const [i, job] of jobs.entries()) {
    const result = await waitingOutRateLimits(
      () =>
        client.POST('/v1/sync_jobs/{id}/retry', {
          params: { path: { id: job.id }, header: { 'Idempotency-Key': deadJobRetryKey(job) } },
        }),
      {
        sleep,
        onWait: (ms) => progress(`Retried ${i} of ${jobs.length}; rate limited, waiting ${ms / 1000} s…`),
      },
    );
    try {
      unwrap(result);
    } catch (error) {
      failures.push(`${job.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
    progress(`Retried ${i + 1} of ${jobs.length}…`);
  }
  return failures;
};
