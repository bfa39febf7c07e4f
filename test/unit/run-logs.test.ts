import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRun, findPersonalStrings, fixturePersonalStrings, RUN_LOG_DIR_VARIABLE } from '../run-logs.js';

/**
 * The search that ends every test run (test/run-logs.ts, jest's globalTeardown): the fixtures'
 * personal strings, read from the fixture files, and a run whose logs or queue messages hold one fails.
 */
describe('the end-of-run search for the fixtures’ personal data', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'run-logs-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the emails, phones, names and address lines of every fixture, not product names or tiny strings', () => {
    const strings = fixturePersonalStrings();
    // The Shopify order (test/fixtures/shopify/) and the tests' own shopper (test/fixtures/shopper.json).
    expect(strings).toEqual(
      expect.arrayContaining([
        'bob.norman@hostmail.com',
        '555-625-1199',
        'Bob Norman',
        'Chestnut Street 92',
        'Louisville',
        'customer@example.com',
        '1 Main St',
        'Ada Byron',
      ]),
    );
    expect(strings).not.toContain('Create Your Own Coffee 3 Pack');
    expect(strings.filter((s) => s.length < 6)).toEqual([]);
  });

  it('reads them from the files: a fixture added is searched for', () => {
    mkdirSync(join(dir, 'more'));
    writeFileSync(
      join(dir, 'more', 'order.json'),
      JSON.stringify({ order: { email: 'new.one@example.net', line_items: [{ name: 'A product' }] } }),
    );
    expect(fixturePersonalStrings(dir)).toEqual(['new.one@example.net']);
  });

  it('finds a planted line in any file of the run, and nothing in clean ones', () => {
    const logs = join(dir, 'logs');
    mkdirSync(logs);
    writeFileSync(join(logs, 'jest-worker-1.log'), '{"level":"INFO","message":"job placed","jobId":"sj_1"}\n');
    writeFileSync(join(logs, 'messages-1.log'), '{"queue":"syncDlq","body":"{\\"jobId\\":\\"sj_1\\"}"}\n');
    const strings = fixturePersonalStrings();
    expect(findPersonalStrings(logs, strings)).toEqual([]);

    writeFileSync(join(logs, 'messages-2.log'), '{"queue":"syncDlq","body":"{\\"address1\\":\\"1 Main St\\"}"}\n');
    expect(findPersonalStrings(logs, strings)).toEqual([expect.stringMatching(/messages-2\.log:1: '1 Main St' in/)]);
  });

  it('fails the run when its directory holds one, and passes it otherwise', async () => {
    const before = process.env[RUN_LOG_DIR_VARIABLE];
    try {
      process.env[RUN_LOG_DIR_VARIABLE] = dir;
      writeFileSync(join(dir, 'jest-worker-1.log'), '{"message":"order stored","orderId":"5550001"}\n');
      await expect(checkRun()).resolves.toBeUndefined();
      writeFileSync(join(dir, 'npm-start-1.log'), '{"message":"refused","detail":"bob.norman@hostmail.com"}\n');
      await expect(checkRun()).rejects.toThrow(/npm-start-1\.log:1: 'bob\.norman@hostmail\.com'/);
    } finally {
      if (before === undefined) delete process.env[RUN_LOG_DIR_VARIABLE];
      else process.env[RUN_LOG_DIR_VARIABLE] = before;
    }
  });
});
