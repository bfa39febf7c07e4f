import { CommandError, type Io, parseOptions, runAsMain, table, tool, UsageError } from './cli/command-line.js';
import { withTable } from './cli/table.js';

/**
 * `npm run keys -- create | list | revoke`: API keys, straight in the table (the API has no key
 * routes: whoever holds the table holds the keys). Only a key's SHA-256 hash is stored; `create`
 * prints the key once, and nothing else ever shows it or its hash.
 *
 * - Locally (default): the table of a running `npm start` (found through
 *   `<DATA_DIR>/endpoints.json`), or, when none runs, the data in DATA_DIR directly.
 * - Deployed: `--table <name>` (the stack's `TableName` output) with the usual AWS credentials
 *   and region; keys issued there are `sk_live_` keys.
 */

const HELP = {
  main: `usage: npm run keys -- <command> [options]

API keys: each authenticates as one owner (CONTRACT.md §4).

commands:
  create --owner <ownerId>   issue a key for an owner; the key is printed once
  list [--owner <ownerId>]   key ids, owners, created and revoked dates (never a key or its hash)
  revoke <key_id>            revoke a key: the API refuses it from the next request on (on AWS within 60 s)

options of every command:
  --table <name>  a deployed stack's table (its TableName output), with your AWS credentials and region;
                  without it: the running \`npm start\`'s table (DATA_DIR, default .local/), else DATA_DIR's data
  --json          JSON instead of text
  -h, --help      this help; \`npm run keys -- <command> --help\` for one command's`,
  create: `usage: npm run keys -- create --owner <ownerId> [--table <name>] [--json]

Issues a key for the owner (1-128 letters, digits, _ . : -) and prints it once; store it then.
Locally keys are sk_test_ keys, deployed ones sk_live_.`,
  list: `usage: npm run keys -- list [--owner <ownerId>] [--table <name>] [--json]

Every key, newest first: its id (key_…, the actorId of the audit log), owner, creation and
revocation dates. Never the key nor its hash.`,
  revoke: `usage: npm run keys -- revoke <key_id> [--table <name>] [--json]

Revokes a key by its id (see list): the API answers 401 to it from the next request on, and on
AWS within 60 s, the time API Gateway keeps a key's verdict (or the -c authorizerCacheSeconds the
stack was deployed with). Revoking a revoked key changes nothing.`,
};

const common = { table: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

const OWNER = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Keys issued on a deployed table are live keys, local ones test keys. */
const withKeyTable = <T>(tableName: string | undefined, io: Io, work: () => Promise<T>) => {
  process.env.API_KEY_PREFIX = tableName ? 'sk_live_' : 'sk_test_';
  return withTable(tableName, io, work);
};

const apiKeys = () => import('../shared/api-keys/api-keys.js');

const create = async (args: string[], io: Io) => {
  const { values } = parseOptions(args, { ...common, owner: { type: 'string' } }, 0);
  if (values.help) return void io.out(HELP.create);
  if (!values.owner) throw new UsageError('create needs --owner <ownerId>');
  if (!OWNER.test(values.owner)) throw new UsageError('--owner must be 1-128 characters of letters, digits, _ . : -');
  const owner = values.owner;
  await withKeyTable(values.table, io, async () => {
    const { generateKey, registerKey } = await apiKeys();
    const key = generateKey(process.env.API_KEY_PREFIX ?? 'sk_test_');
    const record = await registerKey(key, owner);
    if (values.json) return void io.out(JSON.stringify({ ...record, key }, null, 2));
    io.out(`Issued ${record.keyId} for owner ${owner}. The key is shown once; store it now:`);
    io.out(key);
  });
};

const list = async (args: string[], io: Io) => {
  const { values } = parseOptions(args, { ...common, owner: { type: 'string' } }, 0);
  if (values.help) return void io.out(HELP.list);
  const found = await withKeyTable(values.table, io, async () => (await apiKeys()).listKeys());
  const shown = values.owner ? found.filter((key) => key.ownerId === values.owner) : found;
  if (values.json) return void io.out(JSON.stringify(shown, null, 2));
  if (!shown.length) return void io.out(values.owner ? `no keys for owner ${values.owner}` : 'no keys');
  const columns = { keyId: 'KEY ID', ownerId: 'OWNER', createdAt: 'CREATED', revokedAt: 'REVOKED' };
  for (const line of table(shown, columns)) io.out(line);
};

const revoke = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(args, common, 1);
  if (values.help) return void io.out(HELP.revoke);
  const [keyId] = positionals;
  if (!keyId) throw new UsageError('revoke needs a key id (key_…; `npm run keys -- list` shows them)');
  if (keyId.startsWith('sk_'))
    throw new UsageError('revoke takes the key id (key_…), not the key; `npm run keys -- list` shows the ids');
  const result = await withKeyTable(values.table, io, async () => (await apiKeys()).revokeKey(keyId));
  if (result.outcome === 'unknown') throw new CommandError(`no key ${keyId} (\`npm run keys -- list\` shows them)`);
  if (values.json) return void io.out(JSON.stringify(result, null, 2));
  // On AWS a key's verdict is cached by API Gateway: the bound is its TTL (lib/constructs/api.ts).
  const refused = values.table
    ? 'the API refuses it within 60 s (or the -c authorizerCacheSeconds the stack was deployed with).'
    : 'the API refuses it from now on.';
  io.out(
    result.outcome === 'revoked'
      ? `Revoked ${keyId} (owner ${result.key.ownerId}); ${refused}`
      : `${keyId} was already revoked at ${result.key.revokedAt}; nothing changed.`,
  );
};

export const main = tool('keys', HELP.main, { create, list, revoke });

runAsMain(import.meta.url, main);
