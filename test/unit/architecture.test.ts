import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';

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

/** The repository paths (`shared/<feature>/<module>.ts`) and package names a file imports. */
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

/**
 * The order aggregate: the modules of the order's room whose names start with `order` (the owner of
 * an order's partition); the rest of the room is the flow that orchestrates it.
 */
const AGGREGATE = 'shared/order-flow/order';
const isAggregate = (path: string) => path.startsWith(AGGREGATE);

/**
 * The features (use cases), in the one order they may depend in (docs/design.md, "Layers"): a
 * feature imports only features after it, so no two import each other, however indirectly.
 */
const FEATURES = [
  'shared/polling',
  'shared/backfill',
  'shared/order-flow',
  'shared/events',
  'shared/app-webhooks',
  'shared/privacy',
  'shared/stores',
  'shared/api-keys',
  'shared/idempotency',
];
/**
 * Staying connected (these modules of shared/stores) is the one part that speaks for the platforms' shops
 * beside the adapters: it keeps the calls' budget (`withPlatformSignal`), names their errors and a refused
 * refresh. It reaches these modules of shared/platforms and no adapter; every other file of a feature is a
 * use case, off the adapters.
 */
const CONNECTION = ['shared/stores/connection.ts', 'shared/stores/subscriptions.ts'];
const CONNECTION_PLATFORM = ['shared/platforms/http.ts'];

/** The layers below the features, each with the folders it may import besides itself (and packages). */
const BELOW: Record<string, string[]> = {
  'shared/domain': [],
  'shared/core': ['shared/domain'],
  'shared/dynamo': ['shared/core', 'shared/domain'],
  'shared/aws': ['shared/core', 'shared/domain'],
  'shared/platforms': ['shared/core', 'shared/domain'],
  'shared/entities': ['shared/core', 'shared/domain', 'shared/dynamo'],
  'shared/work': ['shared/core', 'shared/domain', 'shared/aws'],
};
/** The HTTP edge, above every feature: what handlers of routes share. */
const EDGE = 'shared/http';

/** The folder-level edges `from → to` between the features, each with one file edge that makes it. */
const featureEdges = () => {
  const edges = new Map<string, string>();
  for (const folder of FEATURES)
    for (const file of inFolder(`${folder}/`))
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        // The order aggregate is below the features (the test after the next): reaching it is no feature edge.
        if (to !== folder && FEATURES.includes(to) && !isAggregate(target))
          edges.set(`${folder} → ${to}`, `${file} → ${target}`);
      }
  return edges;
};

/**
 * The cycles of a directed graph (`a → b` edges), each as its path `a → b → … → a`; empty for a
 * graph without one. A depth-first search: a node met again while on the current path closes one.
 */
export const cyclesOf = (edges: string[]): string[] => {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    const [from, to] = edge.split(' → ');
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (node: string, path: string[]) => {
    if (path.includes(node)) {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    if (done.has(node)) return;
    for (const to of next.get(node) ?? []) visit(to, [...path, node]);
    done.add(node);
  };
  for (const node of next.keys()) visit(node, []);
  return cycles;
};
/** What use cases may know of the platforms: the port (with the failure policy), never an adapter. */
const PLATFORM_PORT = ['shared/platforms/port.ts'];

describe('architecture: the import graph', () => {
  it('reads the tree (a sanity check of the reader itself)', () => {
    expect(inFolder('shared/').length).toBeGreaterThan(40);
    expect(importsOf('functions/sync-worker.ts')).toContain('shared/order-flow/placing-worker.ts');
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
    for (const folder of FEATURES) {
      expect(
        violations(
          `${folder}/`,
          (target, file) =>
            target.startsWith('shared/http/') ||
            (target.startsWith('shared/platforms/') && !PLATFORM_PORT.includes(target) && !CONNECTION.includes(file)),
        ),
      ).toEqual([]);
    }
  });

  it('holds every folder of shared/ to a rule: a feature, a layer below them, or the HTTP edge', () => {
    const folders = [...new Set(inFolder('shared/').map(folderOf))].filter((folder) => folder.split('/').length === 2);
    const ruled = [...FEATURES, ...Object.keys(BELOW), EDGE];
    // A new folder of shared/: add it to FEATURES (in its place) or to BELOW, with what it may import.
    expect(folders.filter((folder) => !ruled.includes(folder)).sort()).toEqual([]);
  });

  it('keeps each layer below the features to the folders it may import, and the port of the platforms', () => {
    for (const [folder, allowed] of Object.entries(BELOW)) {
      const ok = [folder, ...allowed];
      expect(
        violations(
          `${folder}/`,
          (target) =>
            target.startsWith('shared/') &&
            !ok.includes(folderOf(target)) &&
            !(folder !== 'shared/platforms' && PLATFORM_PORT.includes(target)) &&
            !(folder === 'shared/entities' && isAggregate(target)),
        ),
      ).toEqual([]);
    }
  });

  it('lets staying connected reach, of shared/platforms, the port, the failure policy and named modules', () => {
    expect(
      violations(
        'shared/stores/',
        (target, file) =>
          CONNECTION.includes(file) &&
          (target.startsWith('shared/http/') || target.startsWith('shared/platforms/')) &&
          !PLATFORM_PORT.includes(target) &&
          !CONNECTION_PLATFORM.includes(target),
      ),
    ).toEqual([]);
  });

  it('imports the HTTP edge only from handlers (and tests): no feature or layer of shared/ reaches it', () => {
    expect(
      violations('shared/', (target, file) => target.startsWith(`${EDGE}/`) && !file.startsWith(`${EDGE}/`)),
    ).toEqual([]);
  });

  it('lets only handlers (which build their deps) and tests reach the adapters', () => {
    const adapters = (target: string) => target === 'shared/platforms/adapters.ts';
    expect(violations('shared/', adapters)).toEqual([]);
    expect(violations('lib/', adapters)).toEqual([]);
  });

  it('keeps the entity modules and the order aggregate below the features (core, domain, table, port)', () => {
    const below = ['shared/entities', 'shared/domain', 'shared/core', 'shared/dynamo'];
    for (const folder of ['shared/entities/', AGGREGATE]) {
      expect(
        violations(
          folder,
          (target) =>
            target.startsWith('shared/') &&
            !below.includes(folderOf(target)) &&
            !isAggregate(target) &&
            target !== 'shared/platforms/port.ts',
        ),
      ).toEqual([]);
    }
    // The store entities know nothing of an order: only the aggregate's modules may import each other.
    expect(violations('shared/entities/', (target) => target.startsWith('shared/order-flow/'))).toEqual([]);
  });

  it('keeps the work-item runner below the features: core, the domain, aws and the platform port only', () => {
    const below = ['shared/work', 'shared/core', 'shared/domain', 'shared/aws'];
    const above = (target: string) =>
      target.startsWith('shared/') && !below.includes(folderOf(target)) && !PLATFORM_PORT.includes(target);
    expect(violations('shared/work/', above)).toEqual([]);
  });

  it('lets features depend one way: each imports only the features after it in FEATURES', () => {
    const backwards = [...featureEdges()].filter(([edge]) => {
      const [from, to] = edge.split(' → ');
      return FEATURES.indexOf(to) < FEATURES.indexOf(from);
    });
    expect(backwards.map(([, example]) => example)).toEqual([]);
  });

  it('finds no cycle between the features', () => {
    expect(cyclesOf([...featureEdges().keys()])).toEqual([]);
  });

  it('has a cycle finder that finds cycles (a check of the check)', () => {
    expect(cyclesOf(['a → b', 'b → c'])).toEqual([]);
    expect(cyclesOf(['a → b', 'b → a'])).toEqual(['a → b → a']);
    expect(cyclesOf(['x → a', 'a → b', 'b → c', 'c → a', 'c → d'])).toEqual(['a → b → c → a']);
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

  it('gives each value of shared/ one import path: no module forwards another’s (`export … from`)', () => {
    const forwarded = inFolder('shared/').flatMap((file) => {
      const text = source.get(file) ?? '';
      const imported = new Set(
        [...text.matchAll(/^import\s+\{([^}]*)\}/gm)].flatMap(([, list]) =>
          list
            .split(',')
            .map(
              (name) =>
                name
                  .trim()
                  .split(/\s+as\s+/)
                  .pop() ?? '',
            )
            .filter((name) => name && !name.startsWith('type ')),
        ),
      );
      const reExports = [...text.matchAll(/^export\s+(?:type\s+)?(?:\*|\{([^}]*)\})(\s+from\b)?/gm)].flatMap(
        ([statement, list, from]) =>
          from
            ? [`${file}: ${statement.replace(/\s+/g, ' ')}`]
            : (list ?? '')
                .split(',')
                .map((name) => name.trim().split(/\s+as\s+/)[0])
                .filter((name) => imported.has(name))
                .map((name) => `${file}: export { ${name} }`),
      );
      return reExports;
    });
    expect(forwarded).toEqual([]);
  });

  it('names each module of shared/ once: no file name repeated across its folders', () => {
    const byName = new Map<string, string[]>();
    for (const file of inFolder('shared/')) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
    expect([...byName.values()].filter((files) => files.length > 1)).toEqual([]);
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

  it('keeps DynamoDB in the table, the entity modules and the order aggregate: features orchestrate them', () => {
    const OWNERS = ['shared/dynamo', 'shared/entities'];
    // The document client (`dynamo`) is in shared/dynamo/table.ts, whose importers the next test holds.
    const SDK = ['@aws-sdk/lib-dynamodb', '@aws-sdk/client-dynamodb'];
    const EXPRESSION = /\b(?:Condition|Update|KeyCondition|Projection|Filter)Expression\b/;
    const outside = [...inFolder('shared/'), ...inFolder('functions/')].filter(
      (file) => !OWNERS.includes(folderOf(file)) && !isAggregate(file),
    );
    const offenders = outside.flatMap((file) => [
      ...importsOf(file)
        .filter((target) => SDK.includes(target))
        .map((target) => `${file} → ${target}`),
      ...(EXPRESSION.test(source.get(file) ?? '') ? [`${file} builds an expression`] : []),
    ]);
    expect(offenders).toEqual([]);
  });

  it('keeps table keys and helpers in the table, the entity modules and the aggregate: no feature imports them', () => {
    const HELPERS = /^shared\/dynamo\/(?:keys|table)\.ts$/;
    // Features still to move onto entity modules (issue 40 item 4: 30 files → 0, none left). It stays empty.
    const NOT_YET: string[] = [];
    const importers = [...inFolder('shared/'), ...inFolder('functions/')].filter(
      (file) =>
        !['shared/dynamo', 'shared/entities'].includes(folderOf(file)) &&
        !isAggregate(file) &&
        importsOf(file).some((target) => HELPERS.test(target)),
    );
    expect(importers.filter((file) => !NOT_YET.includes(file))).toEqual([]);
    // A file moved off the table leaves the list (it cannot come back unnoticed).
    expect(NOT_YET.filter((file) => !importers.includes(file))).toEqual([]);
  });

  it('runs the follow-ups of a move from one place: its moves and follow-ups are imported there alone', () => {
    const ONE_PLACE = 'shared/order-flow/placing.ts';
    const FOLLOWED = /\b(?:completeJob|foundJob|releaseKeptFulfillments|requestTag)\b/;
    const offenders = [...inFolder('shared/'), ...inFolder('functions/')].filter(
      (file) =>
        file !== ONE_PLACE &&
        [...(source.get(file) ?? '').matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}/gm)].some(([, list]) =>
          FOLLOWED.test(list),
        ),
    );
    expect(offenders).toEqual([]);
  });

  it('spells index attribute names (`GSI3PK`…) only in shared/dynamo/keys.ts: everything else names a role', () => {
    const NAME = /['"`]GSI\d+(?:PK|SK)\b|\bGSI\d+(?:PK|SK)\s*[:=]/;
    const offenders = [...inFolder('shared/'), ...inFolder('functions/'), ...inFolder('bin/')].flatMap((file) =>
      file === 'shared/dynamo/keys.ts'
        ? []
        : (source.get(file) ?? '')
            .split('\n')
            .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
            .filter(({ line }) => !/^\s*(\*|\/\/)/.test(line) && (NAME.test(line) || /REMOVE GSI/.test(line)))
            .map(({ at }) => at),
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
