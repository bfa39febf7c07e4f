import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * The layering rules of docs/design.md ("Layers"), checked over the import graph of the tracked
 * files read as plain text: each `from '…'`, `import('…')` and `jest.mock('…')` is an edge.
 */

const tracked = execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.cjs'], { encoding: 'utf8' })
  .split('\0')
  .filter(Boolean);
const source = new Map(tracked.map((file) => [file, readFileSync(file, 'utf8')]));
const inFolder = (folder: string) => [...source.keys()].filter((file) => file.startsWith(folder));

const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\bjest\.mock\(\s*)['"]([^'"]+)['"]/g;

/** The repository paths (`shared/x/y.ts`) and package names a file imports. */
const importsOf = (file: string) =>
  [...(source.get(file) ?? '').matchAll(SPECIFIER)].map(([, specifier]) =>
    specifier.startsWith('.') ? normalize(join(dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier,
  );

/** Every `file → import` edge of the files under `folder` whose target `forbidden` refuses. */
const violations = (folder: string, forbidden: (target: string, file: string) => boolean) =>
  inFolder(folder).flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden(target, file))
      .map((target) => `${file} → ${target}`),
  );

const folderOf = (path: string) => path.split('/').slice(0, 2).join('/');

const USE_CASES = [
  'shared/stores',
  'shared/orders',
  'shared/sync-jobs',
  'shared/fulfillments',
  'shared/audit-log',
  'shared/webhooks',
  'shared/api-keys',
  'shared/idempotency',
];
/** What use cases may know of the platforms: the port and the failure policy, never an adapter. */
const PLATFORM_PORT = ['shared/platforms/port.ts', 'shared/platforms/failure.ts'];

describe('architecture: the import graph', () => {
  it('reads the tree (a sanity check of the reader itself)', () => {
    expect(inFolder('shared/').length).toBeGreaterThan(40);
    expect(importsOf('functions/sync-worker.ts')).toContain('shared/sync-jobs/worker.ts');
  });

  it('keeps shared/domain pure: it imports only itself and Node built-ins', () => {
    expect(
      violations('shared/domain/', (target) => !target.startsWith('shared/domain/') && !target.startsWith('node:')),
    ).toEqual([]);
  });

  it('keeps shared/core free of the service: it imports only itself, the domain and packages', () => {
    expect(
      violations(
        'shared/core/',
        (target) => target.startsWith('shared/') && !['shared/core', 'shared/domain'].includes(folderOf(target)),
      ),
    ).toEqual([]);
  });

  it('keeps use cases off HTTP and off the concrete platform adapters', () => {
    for (const folder of USE_CASES) {
      expect(
        violations(
          `${folder}/`,
          (target) =>
            target.startsWith('shared/http/') ||
            (target.startsWith('shared/platforms/') && !PLATFORM_PORT.includes(target)),
        ),
      ).toEqual([]);
    }
  });

  it('lets only handlers (which build their deps) and tests reach the adapters', () => {
    const adapters = (target: string) => target === 'shared/platforms/adapters.ts';
    expect(violations('shared/', adapters)).toEqual([]);
    expect(violations('lib/', adapters)).toEqual([]);
  });

  it('keeps the platform adapters off the service: they import the domain, core and each other only', () => {
    expect(
      violations(
        'shared/platforms/',
        (target) =>
          target.startsWith('shared/') &&
          !['shared/platforms', 'shared/domain', 'shared/core'].includes(folderOf(target)),
      ),
    ).toEqual([]);
  });

  it('keeps handlers in domain terms: no table keys or DynamoDB layer in functions/', () => {
    expect(violations('functions/', (target) => target.startsWith('shared/dynamo/'))).toEqual([]);
  });

  it('never imports deployment or test code from shared/ or functions/', () => {
    const outside = (target: string) => /^(lib|bin|bench|test)\//.test(target);
    expect([...violations('shared/', outside), ...violations('functions/', outside)]).toEqual([]);
  });

  it('has no barrel index.ts files (bundles are budgeted)', () => {
    expect(tracked.filter((file) => /(^|\/)index\.ts$/.test(file))).toEqual([]);
  });
});

describe('architecture: one source per fact', () => {
  const PREFIX = /['"`](?:KEY|RST|SST|SJ|AUD|OWNER|SHOP|SRCORDER|PENDING|FULORDER|KEPT|VENDOR|IDEM)#/;

  it('spells table key prefixes only in shared/dynamo/keys.ts', () => {
    const offenders = [...inFolder('shared/'), ...inFolder('functions/')].filter(
      (file) => file !== 'shared/dynamo/keys.ts' && PREFIX.test(source.get(file) ?? ''),
    );
    expect(offenders).toEqual([]);
  });

  it('casts no record attribute outside the record modules', () => {
    const CAST = /\bas (?:string|Item)\b/;
    const offenders = [...inFolder('shared/'), ...inFolder('functions/')].flatMap((file) =>
      (source.get(file) ?? '')
        .split('\n')
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => CAST.test(line))
        .map(({ at }) => at),
    );
    expect(offenders).toEqual([]);
  });
});

describe('architecture: formatting', () => {
  it('keeps every line of a tracked .ts/.cjs file within 120 characters', () => {
    const long = tracked.flatMap((file) =>
      (source.get(file) ?? '')
        .split('\n')
        .map((line, i) => ({ length: line.length, at: `${file}:${i + 1}` }))
        .filter(({ length }) => length > 120)
        .map(({ at, length }) => `${at} (${length})`),
    );
    expect(long).toEqual([]);
  });
});

describe('architecture: docs that cannot drift', () => {
  it('lists every folder of tracked files in docs/design.md’s folder table ("Shape")', () => {
    const shape = readFileSync('docs/design.md', 'utf8').split('\n## Shape')[1].split('\n## ')[0];
    const listed = new Set([...shape.matchAll(/^\| `([^`]+)\/` /gm)].map(([, folder]) => folder));
    const folders = new Set(
      execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
        .split('\0')
        .filter((file) => file.includes('/') && !file.startsWith('.'))
        .map((file) => dirname(file))
        // Fixtures are data: their folder is listed, not each set of them.
        .map((folder) => (folder.startsWith('test/fixtures/') ? 'test/fixtures' : folder))
        // `shared/` is the features' parent: each feature has its own row.
        .filter((folder) => folder !== 'shared'),
    );
    expect([...folders].filter((folder) => !listed.has(folder)).sort()).toEqual([]);
    expect([...listed].filter((folder) => !folders.has(folder)).sort()).toEqual([]);
  });
});
