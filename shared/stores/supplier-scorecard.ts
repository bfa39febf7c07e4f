import { ValidationError } from '../core/errors.js';
import type { Owner } from '../domain/owner.js';
import { localDateOf, scorecardOf } from '../domain/shipping.js';
import { readDays } from '../entities/scorecard-day.js';
import { findSourceStore } from './stores.js';

/**
 * A supplier's scorecard (CONTRACT.md §16.3): the per-day figures of its window, added up. One
 * store read and one Query of at most 366 small items: O(days), whatever the number of jobs.
 */

const DAY = 86_400_000;
const MAX_DAYS = 366;
const DEFAULT_DAYS = 30;

const shift = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / DAY) + 1;

/** The window: both ends given or defaulted (the 30 days up to today, in the supplier's zone). */
export const scorecardWindow = (query: { from?: string; to?: string }, timeZone: string, at = new Date()) => {
  const to = query.to ?? (query.from ? shift(query.from, DEFAULT_DAYS - 1) : localDateOf(at, timeZone));
  const from = query.from ?? shift(to, -(DEFAULT_DAYS - 1));
  if (from > to) throw new ValidationError('from must be on or before to.', 'from');
  if (daysBetween(from, to) > MAX_DAYS) throw new ValidationError(`The window is at most ${MAX_DAYS} days.`, 'to');
  return { from, to };
};

export const supplierScorecard = async (
  owner: Owner,
  resellerStoreId: string,
  id: string,
  query: { from?: string; to?: string },
) => {
  const store = await findSourceStore(owner, resellerStoreId, id);
  const { from, to } = scorecardWindow(query, store.serviceLevel?.timeZone ?? 'UTC');
  const { days } = await readDays(store.id, from, to);
  return { object: 'scorecard' as const, sourceStoreId: store.id, from, to, ...scorecardOf(days) };
};
