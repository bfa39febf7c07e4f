import { type PlatformSimulator, startPlatformSimulator } from '../../lib/local/platform-simulator.js';

/**
 * The platform simulator for a suite that drives the real adapters against it: started once, reset
 * before each test, and `PLATFORM_API_URL` pointed at it for the suite (as it was after). Answers
 * the simulator, once it has started.
 */
export const adaptersAgainstSimulator = () => {
  let sim: PlatformSimulator | undefined;
  const savedUrl = process.env.PLATFORM_API_URL;
  beforeAll(async () => {
    sim = await startPlatformSimulator({ port: 0, slowMs: 50 });
  });
  beforeEach(() => {
    sim!.reset();
    process.env.PLATFORM_API_URL = `${sim!.url}/{shopDomain}`;
  });
  afterAll(async () => {
    await sim?.stop();
    if (savedUrl === undefined) delete process.env.PLATFORM_API_URL;
    else process.env.PLATFORM_API_URL = savedUrl;
  });
  return () => sim!;
};
