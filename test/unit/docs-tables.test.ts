import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { BEGIN, DESIGN, END, itemTable, withTable } from '../../bin/docs-tables.js';
import { ENTRY_MOVES, MOVES } from '../../shared/order-flow/order-transitions.js';

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

/**
 * The Shape table of docs/design.md, as folder → the names its row gives in backticks: a bare file name
 * (`placing-moves.ts`) is a file of that folder, a bare `name/` one of its folders; paths from the root are
 * test/unit/repository-paths.test.ts's.
 */
const shapeRows = (design: string) => {
  const [, ...rows] = tableAfter(design, '\n## Shape\n');
  return rows.map(([folder, holds]) => ({
    folder: folder.replace(/^`|\/`$/g, ''),
    names: [...holds.matchAll(/`([^`]+)`/g)]
      .map(([, name]) => name)
      .filter((name) => /^[\w.-]+(?:\.\w+|\/)$/.test(name)),
  }));
};

/** A folder whose files another file lists: `functions/` holds the handlers `lib/routes.ts` names. */
const LISTED_IN: Record<string, string> = { functions: 'lib/routes.ts' };

const states = (cell: string) =>
  cell
    .split(',')
    .map((s) => s.trim().replace(/`/g, ''))
    .filter((s) => s && s !== '—');

describe('docs that restate the code', () => {
  const design = readFileSync(DESIGN, 'utf8');

  it('shows in docs/design.md the items table the entity modules write (npm run docs:tables)', () => {
    const written = design.split(BEGIN)[1]?.split(END)[0] ?? '';
    expect(cellsOf(written)).toEqual(cellsOf(itemTable()));
  });

  it('writes the table between its markers and refuses a document without them', () => {
    const document = `intro\n${BEGIN}\nold\n${END}\nrest\n`;
    expect(withTable(document, '| a |')).toBe(`intro\n${BEGIN}\n\n| a |\n\n${END}\nrest\n`);
    expect(() => withTable('no markers', '| a |')).toThrow('has no');
  });

  it('names in each row of docs/design.md’s Shape table files of its folder, and every module there', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean);
    const inFolder = (folder: string) =>
      tracked.filter((file) => dirname(file) === folder).map((file) => file.slice(folder.length + 1));
    const folders = new Set(tracked.map((file) => dirname(file)));
    const rows = shapeRows(design);
    const stale = rows.flatMap(({ folder, names }) =>
      names
        .filter((name) =>
          name.endsWith('/') ? !folders.has(`${folder}/${name.slice(0, -1)}`) : !tracked.includes(`${folder}/${name}`),
        )
        .map((name) => `${folder}/${name}`),
    );
    // Test suites name themselves; every other module (.ts, .cjs) is named by its folder's row.
    const unnamed = rows.flatMap(({ folder, names }) => {
      const list = LISTED_IN[folder] ? readFileSync(LISTED_IN[folder], 'utf8') : undefined;
      return inFolder(folder)
        .filter((file) => /\.c?ts$/.test(file) && !file.endsWith('.test.ts'))
        .filter((file) => (list ? !list.includes(`${folder}/${file}`) : !names.includes(file)))
        .map((file) => `${folder}/${file}`);
    });
    expect(rows.length).toBeGreaterThan(20);
    expect({ stale, unnamed }).toEqual({ stale: [], unnamed: [] });
  });

  it('states in docs/design.md exactly the sync job moves of MOVES', () => {
    const [header, ...rows] = tableAfter(design, '### The state machine, as data');
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
