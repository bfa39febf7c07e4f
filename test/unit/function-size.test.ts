import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/**
 * The size rule of docs/design.md ("Layers"): no function in `shared/`, `lib/`, `bin/` or `bench/` whose body
 * spans more than MAX_LINES lines or nests deeper than MAX_DEPTH, read with the TypeScript compiler's own parser.
 *
 * A function is any declaration, arrow, method, accessor, constructor or function expression with a
 * body. Its length is the lines its body spans, braces included. Its depth is how many levels a
 * reader descends from its own body (level 0) to its deepest code; one level is entered by
 * - the body of an `if` (an `else` or an `else if` chain stays on the `if`'s level: a chain counts once),
 * - the body of a `for`, `for…of`, `for…in`, `while` or `do` loop,
 * - the cases of a `switch`,
 * - the blocks of a `try`, its `catch` and its `finally`,
 * - the body of a nested function (a callback, a local helper): its code is read inside the outer one.
 * So `for (…) { if (…) { list.map((x) => …) } }` is three deep.
 *
 * A function nested in an offender is part of its offence (it can only be shorter and shallower), so
 * only the outermost offender of each chain is named.
 */
const MAX_LINES = 60;
const MAX_DEPTH = 4;

type FunctionWithBody = ts.FunctionLikeDeclaration & { body: ts.ConciseBody };

const isFunctionWithBody = (node: ts.Node): node is FunctionWithBody =>
  (ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)) &&
  node.body !== undefined;

/** The deepest level reached under `node`, which itself sits at `level`. */
const deepestUnder = (node: ts.Node, level: number): number => {
  const inner = (child: ts.Node | undefined, childLevel: number) => (child ? deepestUnder(child, childLevel) : level);
  if (isFunctionWithBody(node)) return inner(node.body, level + 1);
  if (ts.isIfStatement(node)) {
    const otherwise = node.elseStatement;
    return Math.max(
      inner(node.expression, level),
      inner(node.thenStatement, level + 1),
      inner(otherwise, otherwise && ts.isIfStatement(otherwise) ? level : level + 1),
    );
  }
  if (ts.isIterationStatement(node, false)) {
    const heads = node.getChildren().filter((child) => child !== node.statement);
    return Math.max(...heads.map((child) => inner(child, level)), inner(node.statement, level + 1));
  }
  if (ts.isSwitchStatement(node)) return Math.max(inner(node.expression, level), inner(node.caseBlock, level + 1));
  if (ts.isTryStatement(node)) {
    return Math.max(
      inner(node.tryBlock, level + 1),
      inner(node.catchClause?.block, level + 1),
      inner(node.finallyBlock, level + 1),
    );
  }
  return Math.max(level, ...node.getChildren().map((child) => deepestUnder(child, level)));
};

interface FunctionSize {
  name: string;
  lines: number;
  depth: number;
}

/** What a reader calls a function: its own name, its variable's or property's, else the call it is given to. */
const ownName = (fn: FunctionWithBody): string => {
  if (fn.name) return fn.name.getText();
  if (ts.isConstructorDeclaration(fn)) return 'constructor';
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent))
    return `(callback of ${parent.expression.getText().replace(/\s+/g, '')})`;
  return '(anonymous)';
};

/** The name a declaration that is not a function gives the functions inside it: a class's, a variable's. */
const scopeName = (node: ts.Node): string[] => {
  if (ts.isClassDeclaration(node) && node.name) return [node.name.getText()];
  if (!ts.isVariableDeclaration(node) && !ts.isPropertyAssignment(node)) return [];
  // `const f = () => …` is named by its own function already.
  return node.initializer && isFunctionWithBody(node.initializer) ? [] : [node.name.getText()];
};

const parse = (text: string, fileName = 'fixture.ts') =>
  ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);

/** The lines a function's body spans and its depth. */
const figuresOf = (fn: FunctionWithBody) => {
  const lineOf = (position: number) => fn.getSourceFile().getLineAndCharacterOfPosition(position).line;
  return { lines: lineOf(fn.body.getEnd()) - lineOf(fn.body.getStart()) + 1, depth: deepestUnder(fn.body, 0) };
};

/** The outermost offending functions of `text`, each named by the functions and declarations around it and its own. */
const offendingFunctions = (text: string, fileName?: string): FunctionSize[] => {
  const found: FunctionSize[] = [];
  const visit = (node: ts.Node, path: string[]) => {
    if (!isFunctionWithBody(node)) {
      // `const handler = wrap(async () => …)`: the callback is read as the handler's.
      for (const child of node.getChildren()) visit(child, [...path, ...scopeName(node)]);
      return;
    }
    const name = [...path, ownName(node)].join(' › ');
    const { lines, depth } = figuresOf(node);
    if (lines > MAX_LINES || depth > MAX_DEPTH) found.push({ name, lines, depth });
    else for (const child of node.getChildren()) visit(child, [...path, ownName(node)]);
  };
  visit(parse(text, fileName), []);
  return found;
};

/** The figures of one named function of `text`, offending or not (for the checks of the measure). */
const sizeOf = (text: string, name: string): FunctionSize | undefined => {
  let size: FunctionSize | undefined;
  const visit = (node: ts.Node) => {
    if (isFunctionWithBody(node) && ownName(node) === name && !size) size = { name, ...figuresOf(node) };
    node.forEachChild(visit);
  };
  visit(parse(text));
  return size;
};

/**
 * The offenders still to split: none (shared/ since issue 27's rewrites, lib/, bin/ and bench/ since issue 40's).
 * Nothing may join it: a new offender is split before it merges; an entry that no longer offends fails the test.
 */
const ALLOWED = new Set<string>([]);

const tracked = execFileSync('git', ['ls-files', '-z', '--', 'shared/*.ts', 'lib/*.ts', 'bin/*.ts', 'bench/*.ts'], {
  encoding: 'utf8',
})
  .split('\0')
  .filter(Boolean);

const offenders = tracked.flatMap((file) =>
  offendingFunctions(readFileSync(file, 'utf8'), file).map(({ name, lines, depth }) => ({
    key: `${file}: ${name}`,
    figure: `${lines} lines, depth ${depth}`,
  })),
);

describe('function size: no function in shared/, lib/, bin/ or bench/ over 60 lines or nested deeper than 4', () => {
  it('finds no offender outside the allow-list (split it: well-named pieces, early returns)', () => {
    expect(offenders.filter(({ key }) => !ALLOWED.has(key)).map(({ key, figure }) => `${key} (${figure})`)).toEqual([]);
  });

  it('keeps no allow-listed function that no longer offends (take it off the list)', () => {
    const offending = new Set(offenders.map(({ key }) => key));
    expect([...ALLOWED].filter((key) => !offending.has(key))).toEqual([]);
  });

  it('reads the tree (a sanity check of the reader itself)', () => {
    expect(tracked.length).toBeGreaterThan(40);
  });
});

describe('function size: the measure (a check of the check)', () => {
  const lines = (count: number) => Array.from({ length: count }, (_, i) => `  const a${i} = ${i};`).join('\n');

  it('counts the lines a body spans, braces included', () => {
    expect(sizeOf(`function f() {\n${lines(58)}\n}`, 'f')).toEqual({ name: 'f', lines: 60, depth: 0 });
    expect(offendingFunctions(`function f() {\n${lines(58)}\n}`)).toEqual([]);
    expect(offendingFunctions(`const g = () => {\n${lines(59)}\n};`)).toEqual([{ name: 'g', lines: 61, depth: 0 }]);
    expect(sizeOf('const h = (x: number) =>\n  x + 1;', 'h')).toEqual({ name: 'h', lines: 1, depth: 0 });
  });

  it('counts a level per if, loop, switch, try and catch, and an else-if chain once', () => {
    const ifs = 'function f(a: number) { if (a) { for (;;) { while (a) { switch (a) { case 1: return; } } } } }';
    expect(sizeOf(ifs, 'f')?.depth).toBe(4);
    const chain = 'function f(a: number) { if (a === 1) { a++; } else if (a === 2) { a--; } else if (a) { a = 0; } }';
    expect(sizeOf(chain, 'f')?.depth).toBe(1);
    const elseBlock = 'function f(a: number) { if (a) { return 1; } else { if (a > 1) return 2; } }';
    expect(sizeOf(elseBlock, 'f')?.depth).toBe(2);
    expect(sizeOf('function f() { try { for (const x of []) g(x); } catch {} }', 'f')?.depth).toBe(2);
    expect(sizeOf('function f() { try { g(); } catch { do { g(1); } while (0); } }', 'f')?.depth).toBe(2);
    expect(sizeOf('function f() { try { g(); } finally { for (;;) g(); } }', 'f')?.depth).toBe(2);
    expect(sizeOf('function f() { return 1; }', 'f')?.depth).toBe(0);
  });

  it('counts a nested function body (a callback) as a level, and names the outermost offender only', () => {
    const callbacks = 'const f = (xs: number[][]) => xs.map((x) => x.filter((y) => { if (y) { for (;;) { g(); } } }));';
    expect(sizeOf(callbacks, 'f')?.depth).toBe(4);
    const deeper =
      'function f(xs: number[]) { for (const x of xs) { xs.map(() => { if (x) { try { if (x) g(); } catch {} } }); } }';
    expect(offendingFunctions(deeper)).toEqual([{ name: 'f', lines: 1, depth: 5 }]);
    const method =
      'class C { m() { return [1].map(() => [2].map(() => [3].map(() => [4].map(() => [5].map((x) => x))))); } }';
    expect(offendingFunctions(method)).toEqual([{ name: 'C › m', lines: 1, depth: 5 }]);
  });

  it('reads the reconciler of issue 27 ("nests seven deep", its own body counted) six levels under its body', () => {
    const reconciler = `const reconcile = async () => {
      await Promise.all([
        ...partitions.map((partition) =>
          eachJob(partition, async (jobs) => {
            await Promise.all(
              jobs.map((job) =>
                handle(job, async () => {
                  if (stalled(job)) {
                    if (await resend(job)) report.resent++;
                  }
                }),
              ),
            );
          }),
        ),
      ]);
    };`;
    expect(offendingFunctions(reconciler)).toEqual([{ name: 'reconcile', lines: 17, depth: 6 }]);
  });

  it('names an offending callback by its enclosing function and the call it is given to', () => {
    const body = `{\n${lines(61)}\n}`;
    expect(offendingFunctions(`export const handler = wrap(async () => ${body});`)).toEqual([
      { name: 'handler › (callback of wrap)', lines: 63, depth: 0 },
    ]);
    expect(offendingFunctions(`function outer() { return { run: () => ${body} }; }`)).toEqual([
      { name: 'outer', lines: 63, depth: 1 },
    ]);
  });
});
