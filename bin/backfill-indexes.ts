import type { BackfillChange, BackfillSummary } from '../shared/backfill/backfill-indexes.js';
import { type Io, parseOptions, runAsMain, singleCommandTool } from './cli/command-line.js';
import { withTable } from './cli/table.js';

/**
 * `npm run backfill-indexes [-- --table <name>] [--dry-run]`: gives the sync jobs and audit entries
 * written before an index existed the index attributes the current code gives them
 * (shared/backfill/, docs/design.md "Deploying the indexes"). Finds the table as `npm run keys` does.
 */

const HELP = `usage: npm run backfill-indexes -- [--table <name>] [--dry-run] [--json]

Gives every sync job and audit entry the index keys the current code would have given it in its
state (GSI1-GSI7 keys, openPK): run once after deploying a stack whose update added indexes. Writes
only missing or different index attributes, one conditional UpdateItem per item; an item that moves
meanwhile is left to its move and reported. Running it again changes nothing.

options:
  --table <name>  a deployed stack's table (its TableName output), with your AWS credentials and region;
                  without it: the running \`npm start\`'s table (DATA_DIR, default .local/), else DATA_DIR's data
  --dry-run       print what would change, write nothing
  --json          the summary as JSON
  -h, --help      this help`;

const KIND = { sync_job: 'sync job', audit_entry: 'audit entry', order_item: 'order item' } as const;

const describeChange = (change: BackfillChange) => {
  const what = `${change.key.PK} (${KIND[change.kind]}${change.status ? `, ${change.status}` : ''})`;
  const sets = Object.entries(change.repair.set).map(([attribute, value]) => `${attribute}=${value}`);
  const parts = [
    ...(sets.length ? [`set ${sets.join(' ')}`] : []),
    ...(change.repair.remove.length ? [`remove ${change.repair.remove.join(' ')}`] : []),
  ];
  return `${what}: ${parts.join('; ')}`;
};

const report = (summary: BackfillSummary, dryRun: boolean, io: Io) => {
  const { sync_job: jobs, audit_entry: entries } = summary.updated;
  const done = dryRun ? 'would be updated (--dry-run: nothing written)' : 'updated';
  io.out(`scanned ${summary.scanned} items`);
  io.out(`${jobs} sync job(s) and ${entries} audit entry(ies) ${done}`);
  if (summary.updated.order_item) io.out(`${summary.updated.order_item} other order item(s) tagged`);
  io.out(`${summary.alreadyRight} already right, ${summary.others} other item(s) not concerned`);
  if (summary.moved.length) {
    io.out(`${summary.moved.length} skipped because they moved since the scan (run again for them):`);
    for (const key of summary.moved) io.out(`  ${key.PK}`);
  }
  if (summary.unreadable.length) {
    io.out(`${summary.unreadable.length} unreadable, left alone:`);
    for (const { key, reason } of summary.unreadable) io.out(`  ${key.PK} ${key.SK}: ${reason}`);
  }
};

const backfill = async (args: string[], io: Io) => {
  const options = { table: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } } as const;
  const { values } = parseOptions(args, { ...options, help: { type: 'boolean', short: 'h' } }, 0);
  if (values.help) return void io.out(HELP);
  const dryRun = values['dry-run'] ?? false;
  const summary = await withTable(values.table, io, async () => {
    const { backfillIndexes } = await import('../shared/backfill/backfill-indexes.js');
    return backfillIndexes({
      dryRun,
      onPage: (sofar) => {
        const changed = sofar.updated.sync_job + sofar.updated.audit_entry;
        io.err(
          `scanned ${sofar.scanned} items, ${changed} ${dryRun ? 'to update' : 'updated'}, ${sofar.moved.length} moved`,
        );
      },
      onChange: (change) => {
        if (dryRun && !values.json) io.out(describeChange(change));
      },
    });
  });
  if (values.json) return void io.out(JSON.stringify({ dryRun, ...summary }, null, 2));
  report(summary, dryRun, io);
};

export const main = singleCommandTool('backfill-indexes', backfill);

runAsMain(import.meta.url, main);
