import { readdirSync, readFileSync } from 'node:fs';

/**
 * The resident memory of this process and every process it started (DynamoDB Local's JVM), as
 * Linux reports it in /proc: what `npm start` costs a laptop. Sampled, so the peak is a lower
 * bound within one sampling interval. Elsewhere than Linux it reports nothing.
 */

const rssBytes = (pid: number) => {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0; // it ended meanwhile
  }
};

const childrenOf = (pid: number): number[] => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
};

const treeOf = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(treeOf)];

export const memorySampler = (everyMs = 250) => {
  let peak = { total: 0, self: 0 };
  const sample = () => {
    const pids = treeOf(process.pid);
    const self = rssBytes(process.pid);
    const total = pids.reduce((sum, pid) => sum + (pid === process.pid ? self : rssBytes(pid)), 0);
    if (total > peak.total) peak = { total, self };
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    /** The largest sum seen, and this process's share of it (worker threads included). */
    peak: () => {
      sample();
      return peak;
    },
    stop: () => clearInterval(timer),
  };
};

export const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
