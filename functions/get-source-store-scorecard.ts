import { parseInput } from '../shared/core/errors.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { ScorecardQuery } from '../shared/http/schemas.js';
import { supplierScorecard } from '../shared/stores/supplier-scorecard.js';

/** A supplier's scorecard (CONTRACT.md §16.3): its window's per-day figures, added up. */
export const handler = apiHandler(async ({ ownerId, path, query }) =>
  ok(await supplierScorecard({ ownerId }, path.rst_id, path.id, parseInput(ScorecardQuery, query))),
);
