import { execFileSync } from 'node:child_process';

/**
 * The typed client's types (client/schema.d.ts): openapi-typescript's rendering of the document,
 * formatted by the project's Biome and with its long doc comments wrapped, so the generated file
 * keeps the house rules (120 columns) like any other.
 */

const WIDTH = 120;

/** Greedy word wrap of `text` into lines of at most `width` characters after `prefix`. */
const wrap = (text: string, prefix: string) => {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && prefix.length + line.length + 1 + word.length > WIDTH) {
      lines.push(prefix + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, prefix + line];
};

/** `/** text *\/` and ` * text` lines longer than the width become wrapped block comment lines. */
export const wrapComments = (source: string) =>
  source
    .split('\n')
    .flatMap((line) => {
      if (line.length <= WIDTH) return [line];
      const single = line.match(/^(\s*)\/\*\* (.*) \*\/$/);
      if (single) return [`${single[1]}/**`, ...wrap(single[2], `${single[1]} * `), `${single[1]} */`];
      const inner = line.match(/^(\s*) \* (.*)$/);
      if (inner) return wrap(inner[2], `${inner[1]} * `);
      return [line];
    })
    .join('\n');

const biomeFormat = (source: string) =>
  execFileSync(process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'format', '--stdin-file-path=schema.d.ts'], {
    input: source,
    encoding: 'utf8',
  });

export const buildClientTypes = async (document: unknown) => {
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const header = COMMENT_HEADER.replace(
    'Do not make direct changes to the file',
    'Run `npm run openapi` instead of editing it',
  );
  const types = astToString(await openapiTS(document as Parameters<typeof openapiTS>[0]));
  return wrapComments(biomeFormat(header + types));
};
