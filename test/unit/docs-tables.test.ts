import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { BEGIN, END, ITEMS_DOC, itemTable, withTable } from '../../bin/docs-tables.js';
import { ENTRY_MOVES, MOVES } from '../../shared/order-flow/order-repository.js';

/**
 * The tables of the docs that restate the code (issue 18, item 5): the items table is written from
 * the entity modules (`npm run docs:tables`) and must be what they write now; the two tables of
 * moves must say what MOVES and ENTRY_MOVES say. Cells are compared trimmed: the formatter pads.
 */

const cellsOf = (table: string) =>
  table
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s-|]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );

/** The first table after `heading` in a Markdown document, as rows of trimmed cells (header first). */
const tableAfter = (document: string, heading: string) => {
  const section = document.split(heading)[1];
  if (section === undefined) throw new Error(`no "${heading}"`);
  const lines = section.split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  return cellsOf(lines.slice(start, end).join('\n'));
};

/** The names a piece of Markdown gives in backticks that name a file (`placing.ts`) or a folder (`local/`). */
const fileNames = (text: string) =>
  [...text.matchAll(/`([^`]+)`/g)].map(([, name]) => name).filter((name) => /^[\w.-]+(?:\.\w+|\/)$/.test(name));

/**
 * A folder's README lists its files in its sections headed `## Files…` (the rest of it is prose, free to
 * name any file): the part of the README the tests hold to the folder, or undefined for a folder without one.
 */
export const filesSection = (folder: string): string | undefined => {
  const readme = `${folder}/README.md`;
  if (!existsSync(readme)) return undefined;
  const sections = readFileSync(readme, 'utf8')
    .split(/\n(?=## )/)
    .filter((section) => section.startsWith('## Files'));
  return sections.length > 0 ? sections.join('\n') : undefined;
};

/**
 * The Shape table of docs/design.md, as folder → the names its files are given by: its folder's README
 * (`## Files…` sections) when it has one, else its row. A bare file name (`placing.ts`) is a file of
 * that folder, a bare `name/` one of its folders; paths from the root are test/unit/repository-paths.test.ts's.
 */
const shapeRows = (design: string) => {
  const [, ...rows] = tableAfter(design, '\n## Shape\n');
  return rows.map(([cell, holds]) => {
    const folder = cell.replace(/^`|\/`$/g, '');
    const listed = filesSection(folder);
    return { folder, names: fileNames(listed ?? holds), where: listed ? `${folder}/README.md` : 'docs/design.md' };
  });
};

/** A folder whose files another file lists: `functions/` holds the handlers `lib/routes.ts` names. */
const LISTED_IN: Record<string, string> = { functions: 'lib/routes.ts' };

const states = (cell: string) =>
  cell
    .split(',')
    .map((s) => s.trim().replace(/`/g, ''))
    .filter((s) => s && s !== '—');

describe('docs that restate the code', () => {
  const design = readFileSync('docs/design.md', 'utf8');
  const orderFlow = readFileSync('shared/order-flow/README.md', 'utf8');

  it('shows in shared/dynamo/README.md the items table the entity modules write (npm run docs:tables)', () => {
    const written = readFileSync(ITEMS_DOC, 'utf8').split(BEGIN)[1]?.split(END)[0] ?? '';
    expect(cellsOf(written)).toEqual(cellsOf(itemTable()));
  });

  it('writes the table between its markers and refuses a document without them', () => {
    const document = `intro\n${BEGIN}\nold\n${END}\nrest\n`;
    expect(withTable(document, '| a |')).toBe(`intro\n${BEGIN}\n\n| a |\n\n${END}\nrest\n`);
    expect(() => withTable('no markers', '| a |')).toThrow('has no');
  });

  it('names in each folder’s README (or its row of docs/design.md’s Shape table) files of it, and every module', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean);
    const inFolder = (folder: string) =>
      tracked.filter((file) => dirname(file) === folder).map((file) => file.slice(folder.length + 1));
    const folders = new Set(tracked.map((file) => dirname(file)));
    const rows = shapeRows(design);
    const stale = rows.flatMap(({ folder, names, where }) =>
      names
        .filter((name) =>
          name.endsWith('/') ? !folders.has(`${folder}/${name.slice(0, -1)}`) : !tracked.includes(`${folder}/${name}`),
        )
        .map((name) => `${where} names ${folder}/${name}, which does not exist`),
    );
    // Test suites name themselves; every other module (.ts, .cjs) is named by its folder's row.
    const unnamed = rows.flatMap(({ folder, names, where }) => {
      const list = LISTED_IN[folder] ? readFileSync(LISTED_IN[folder], 'utf8') : undefined;
      return inFolder(folder)
        .filter((file) => /\.c?ts$/.test(file) && !file.endsWith('.test.ts'))
        .filter((file) => (list ? !list.includes(`${folder}/${file}`) : !names.includes(file)))
        .map((file) => `${folder}/${file} is named nowhere: add a line for it to ${where}`);
    });
    expect(rows.length).toBeGreaterThan(20);
    expect({ stale, unnamed }).toEqual({ stale: [], unnamed: [] });
  });

  it('gives every folder of shared/ a README whose `## Files…` sections name its files (a new file: a line)', () => {
    const tracked = execFileSync('git', ['ls-files', '-z', 'shared'], { encoding: 'utf8' }).split('\0').filter(Boolean);
    const folders = [...new Set(tracked.map((file) => dirname(file)))].filter((folder) => folder !== 'shared');
    // Which names each README gives, and that they are exactly the folder's files, is the test above's.
    const without = folders.filter((folder) => filesSection(folder) === undefined);
    expect(folders.length).toBeGreaterThan(15);
    expect(without.map((folder) => `${folder}/README.md with a "## Files" section is missing`)).toEqual([]);
    expect(
      shapeRows(design)
        .filter(({ folder }) => folder.startsWith('shared/'))
        .map(({ where }) => where)
        .sort(),
    ).toEqual(folders.sort().map((folder) => `${folder}/README.md`));
  });

  it('keeps docs/design.md a map read in one sitting: under 600 lines, the details in the folders’ READMEs', () => {
    expect(design.split('\n').length).toBeLessThan(600);
  });

  it('states in shared/order-flow/README.md exactly the sync job moves of MOVES', () => {
    const [header, ...rows] = tableAfter(orderFlow, '### The state machine, as data');
    expect(header.slice(0, 4)).toEqual(['move', 'from', 'to', 'new message']);
    const documented = rows.map(([move, from, to, message]) => ({
      move: move.replace(/`/g, '').replace('(creation)', 'create'),
      from: states(from),
      to: to.replace(/`/g, ''),
      newMessage: message === 'yes',
    }));
    const coded = Object.entries(MOVES).map(([move, rule]) => ({
      move,
      from: [...rule.from],
      to: rule.to,
      newMessage: rule.newMessage,
    }));
    expect(documented).toEqual(coded);
  });

  it('states in docs/propagation.md exactly the fulfillment entry moves of ENTRY_MOVES', () => {
    const [header, ...rows] = tableAfter(readFileSync('docs/propagation.md', 'utf8'), "### The entry's moves, as data");
    expect(header.slice(0, 3)).toEqual(['move', 'from', 'to']);
    const documented = rows.map(([move, from, to]) => ({
      move: move.replace(/`/g, ''),
      from: states(from).map((s) => (s === '(none)' ? null : s)),
      to: to === '(stays)' ? null : to.replace(/`/g, ''),
    }));
    const coded = Object.entries(ENTRY_MOVES).map(([move, rule]) => ({ move, from: [...rule.from], to: rule.to }));
    expect(documented).toEqual(coded);
  });
});
