/**
 * A reason the local runtime cannot start that the user can fix (Java missing, a port taken, a
 * data directory that cannot be written): `npm start` prints its message as one line, no stack.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Refuses a port another process holds, before anything slow has started. */
export const assertPortFree = async (port: number, what: string) => {
  if (!port) return;
  const { createServer } = await import('node:net');
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new StartupError(`${what} port ${port} is taken by another process; free it or set another port`)
          : error,
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
};
