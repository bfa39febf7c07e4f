import { readFileSync } from 'node:fs';
import { BEGIN, DESIGN, END, itemTable, withTable } from '../../bin/docs-tables.js';
import { ENTRY_MOVES, MOVES } from '../../shared/order/transitions.js';

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

  it('states in docs/reverse-sync.md exactly the fulfillment entry moves of ENTRY_MOVES', () => {
    const [header, ...rows] = tableAfter(
      readFileSync('docs/reverse-sync.md', 'utf8'),
      "### The entry's moves, as data",
    );
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
