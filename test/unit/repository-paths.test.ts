import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize, resolve } from 'node:path';
import ts from 'typescript';

/**
 * Comments and docs that point somewhere must point at something: every repository path named in a
 * comment of a tracked .ts/.cjs file or in a tracked Markdown file must exist (issue 27, point 5).
 *
 * What counts as a path (`pathsIn`), so that prose, URLs and runtime files are left alone:
 * - a token under a top folder of the repo (`shared/…`, `lib/…`, `test/…`, …, also `dir/` for a folder):
 *   read from the repository root; `.js` names the `.ts` it is compiled from;
 * - a token whose first folder is a tracked folder at any depth (`order-flow/placing.ts`, `local/`) and
 *   that ends with a file extension or `/`: it must end some tracked path;
 * - a bare file name (`placing.ts`, `design.md`, `jest.config.cjs`): some tracked file must have that name; a
 *   bare Markdown name the repo lacks is a companion doc (`CONTRACT.md`), looked up beside the checkout;
 * - a token after `./` or `../`: read from the folder of the file that names it; one that leaves the
 *   checkout is a companion doc (README.md's `../shared/<doc>.md`).
 * A token with a placeholder (`functions/<name>.ts`, `test/unit/*.test.ts`, `shared/…`) names no
 * file, and so do bare `.json` names and paths under folders the repo does not track (`cdk.out/`):
 * they are runtime data or somebody else's files.
 */

const tracked = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean);
const trackedFiles = new Set(tracked);
const trackedFolders = new Set(
  tracked.flatMap((file) =>
    file
      .split('/')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  ),
);
const trackedNames = new Set(tracked.map((file) => basename(file)));
const folderNames = new Set([...trackedFolders].map((folder) => basename(folder)));

const TOP_FOLDERS = ['shared', 'lib', 'functions', 'bin', 'test', 'bench', 'docs', 'client', 'console'];

/** The folder of the companion docs (SPEC.md, CONTRACT.md…): beside the checkout, in development and in CI. */
const COMPANION = resolve('..', 'shared');
const hasCompanion = existsSync(join(COMPANION, 'SPEC.md'));

/** Names that look like a file and name none on purpose, each with the reason. */
const NOT_PATHS = new Map([['index.ts', 'docs/design.md: the barrel file the layers forbid']]);

/** A token: not inside a word, URL or package name; `./`, `../` kept apart; not followed by a placeholder. */
const TOKEN = new RegExp(
  String.raw`(?<![\w@/.\-$<>*])((?:\.\.?/)*)` +
    String.raw`((?:[\w-][\w.-]*/)+(?:[\w-][\w.-]*[\w])?|[\w-][\w.-]*\.(?:ts|cjs|md|json))` +
    String.raw`(?![\w/<>*…])`,
  'g',
);

const EXTENSION = /\.(?:ts|cjs|js|md|json|d\.ts)$/;

type Reference = { path: string; where: 'repository' | 'companion' };

/** The repository paths a piece of text names, by the rules above, as written (prefix included). */
const pathsIn = (text: string): string[] =>
  [...text.matchAll(TOKEN)]
    .filter(([, prefix, path]) => {
      if (prefix) return true;
      const [first] = path.split('/');
      if (!path.includes('/')) return !path.endsWith('.json') && !NOT_PATHS.has(path);
      if (TOP_FOLDERS.includes(first)) return true;
      return folderNames.has(first) && (EXTENSION.test(path) || path.endsWith('/'));
    })
    .map(([, prefix, path]) => `${prefix}${path}`);

const inRepository = (path: string) => {
  const bare = path.replace(/\/$/, '');
  return trackedFiles.has(bare) || trackedFolders.has(bare) || trackedFiles.has(bare.replace(/\.js$/, '.ts'));
};

/** Where `path`, named in `file`, points, and whether something is there. */
const resolvePath = (file: string, path: string): Reference & { exists: boolean } => {
  if (path.startsWith('.')) {
    const relative = normalize(join(dirname(file), path));
    if (!relative.startsWith('..')) return { path: relative, where: 'repository', exists: inRepository(relative) };
    const companion = relative.replace(/^\.\.\/shared\//, '');
    return { path: companion, where: 'companion', exists: existsSync(join(COMPANION, companion)) };
  }
  if (TOP_FOLDERS.includes(path.split('/')[0])) return { path, where: 'repository', exists: inRepository(path) };
  if (path.includes('/')) {
    const bare = path.replace(/\/$/, '').replace(/\.js$/, '.ts');
    const exists = [...trackedFiles, ...trackedFolders].some((tracked) => tracked.endsWith(`/${bare}`));
    return { path, where: 'repository', exists };
  }
  if (trackedNames.has(path) || !path.endsWith('.md'))
    return { path, where: 'repository', exists: trackedNames.has(path) };
  return { path, where: 'companion', exists: existsSync(join(COMPANION, path)) };
};

/** The comments of a source file, each with the line it starts on. */
const commentsOf = (file: string, text: string) => {
  const kind = file.endsWith('.cjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const parsed = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const comments = new Map<number, string>();
  const keep = (ranges: ts.CommentRange[] | undefined) => {
    for (const { pos, end } of ranges ?? []) comments.set(pos, text.slice(pos, end));
  };
  const visit = (node: ts.Node) => {
    keep(ts.getLeadingCommentRanges(text, node.getFullStart()));
    keep(ts.getTrailingCommentRanges(text, node.getEnd()));
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return [...comments].map(([pos, comment]) => ({ line: parsed.getLineAndCharacterOfPosition(pos).line + 1, comment }));
};

/** Every path named by a comment of a tracked .ts/.cjs file or by a tracked Markdown file, with where. */
const references = tracked
  .filter((file) => /\.(?:ts|cjs|md)$/.test(file))
  .flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const pieces = file.endsWith('.md') ? [{ line: 1, comment: text }] : commentsOf(file, text);
    return pieces.flatMap(({ line, comment }) =>
      comment
        .split('\n')
        .flatMap((text, i) =>
          pathsIn(text).map((path) => ({ at: `${file}:${line + i}`, ...resolvePath(file, path), named: path })),
        ),
    );
  });

describe('comments and docs that name repository paths', () => {
  it('reads paths by the rules, and leaves prose, URLs, placeholders and runtime files alone', () => {
    const line =
      'see shared/order-flow/placing.ts, `worker.ts`, order-flow/indexes.ts and bin/cli/ (CONTRACT.md §3); ' +
      'not https://x.dev/docs/api, orders/create, @aws-sdk/client-sqs, functions/<name>.ts, ' +
      'test/unit/*.test.ts, cdk.out/validation-report.json, orders.json or aws-cdk-lib/aws-iam';
    expect(pathsIn(line)).toEqual([
      'shared/order-flow/placing.ts',
      'worker.ts',
      'order-flow/indexes.ts',
      'bin/cli/',
      'CONTRACT.md',
    ]);
    expect(pathsIn('the companion `../shared/SPEC.md`; an import `../../shared/dynamo/keys.js`')).toEqual([
      '../shared/SPEC.md',
      '../../shared/dynamo/keys.js',
    ]);
  });

  it('resolves each kind of path, and finds the missing ones', () => {
    expect(resolvePath('shared/order-flow/placing-worker.ts', 'shared/order-flow/placing.ts').exists).toBe(true);
    expect(resolvePath('lib/routes.ts', 'shared/orders/order-jobs.ts').exists).toBe(false);
    expect(resolvePath('shared/order-flow/propagating-worker.ts', 'order-flow/indexes.ts').exists).toBe(false);
    expect(resolvePath('shared/order-flow/propagating-worker.ts', 'dynamo/keys.ts').exists).toBe(true);
    expect(resolvePath('shared/order-flow/placing.ts', 'attempts.ts').exists).toBe(false);
    expect(resolvePath('test/unit/x.test.ts', '../../shared/dynamo/keys.js').exists).toBe(true);
    expect(resolvePath('README.md', '../shared/SPEC.md')).toMatchObject({ path: 'SPEC.md', where: 'companion' });
    expect(resolvePath('shared/core/errors.ts', 'CONTRACT.md')).toMatchObject({ where: 'companion' });
  });

  it('names only repository paths that exist', () => {
    const missing = references
      .filter(({ where, exists }) => where === 'repository' && !exists)
      .map(({ at, named }) => `${at} ${named}`);
    expect(missing).toEqual([]);
  });

  it('names no file outside the repository in its own Markdown: README.md, docs/ and every README stand alone', () => {
    // A contract's section is cited by name (`CONTRACT §13`), never as a file a clone elsewhere lacks.
    const outside = references
      .filter(({ at, where }) => at.split(':')[0].endsWith('.md') && where === 'companion')
      .map(({ at, named }) => `${at} ${named}`);
    expect(outside).toEqual([]);
  });

  // The companion docs sit beside the checkout (CI clones the repo next to them); a checkout
  // elsewhere has none to look in.
  (hasCompanion ? it : it.skip)('names only companion docs that exist beside the checkout', () => {
    const missing = references
      .filter(({ where, exists }) => where === 'companion' && !exists)
      .map(({ at, named }) => `${at} ${named}`);
    expect(missing).toEqual([]);
  });
});
