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

/**
 * `everyMs`: how often the resident memory is read. The processes are found again once a second
 * (`/proc/<pid>/task/<tid>/children` for each of this process's threads, some forty with the environments'
 * worker threads), not at every sample: walked four times a second, it took a tenth of the runtime's
 * main thread in `bench:e2e` (issue 41).
 */
export const memorySampler = (everyMs = 250, treeEveryMs = 1000) => {
  let peak = { total: 0, self: 0 };
  let pids: number[] = [];
  let treeReadAt = Number.NEGATIVE_INFINITY;
  const sample = () => {
    if (performance.now() - treeReadAt >= treeEveryMs) {
      pids = treeOf(process.pid);
      treeReadAt = performance.now();
    }
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
      treeReadAt = Number.NEGATIVE_INFINITY;
      sample();
      return peak;
    },
    stop: () => clearInterval(timer),
  };
};

export const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** Linux's clock ticks per second (`getconf CLK_TCK`), in which /proc/<pid>/stat counts CPU time. */
const CLOCK_TICKS = 100;

/** The CPU time (user + system, every thread) a process has used, in ms; 0 when it ended or elsewhere than Linux. */
const cpuMs = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command's name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
};

/**
 * The CPU this process (its worker threads included) and the processes it started (DynamoDB Local)
 * have used: unlike wall-clock figures, a measure of the work that another load on the machine
 * inflates little. `since()` answers the ms used since the sampler was made.
 */
export const cpuSampler = () => {
  const read = () => {
    const self = cpuMs(process.pid);
    const children = childrenOf(process.pid)
      .flatMap(treeOf)
      .reduce((sum, pid) => sum + cpuMs(pid), 0);
    return { self, children };
  };
  const start = read();
  return {
    since: () => {
      const now = read();
      return { self: now.self - start.self, children: now.children - start.children };
    },
  };
};
