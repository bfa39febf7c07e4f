/**
 * The EMF lines (Powertools' metrics, written to stdout) that `run` publishes: metrics on for its while,
 * what earlier tests counted flushed first, and what `run` counted published after it.
 */
export const published = async <T>(run: () => Promise<T>) => {
  const was = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  const { metricsMiddleware } = await import('../../shared/core/telemetry.js');
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await metricsMiddleware().after!({} as never);
    lines.length = 0;
    const result = await run();
    await metricsMiddleware().after!({} as never);
    return { result, emf: lines.flatMap((line) => line.split('\n')).filter((l) => l.includes('"_aws"')) };
  } finally {
    spy.mockRestore();
    if (was === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = was;
  }
};
