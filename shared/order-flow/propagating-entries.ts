/**
 * The fulfillment entries' reads and moves are the order aggregate's (shared/order-flow/order-entries.ts: they
 * are updates of the job item); the fulfillments pipeline calls them from here.
 */
export {
  acceptEntry,
  deferEntry,
  type FulfillmentOutcome,
  leavePropagating,
  loadJobWithFulfillments,
  loadPropagation,
  moveEntry,
  type Propagation,
  recordTagged,
  resendEntry,
  trackingKey,
  trackingOf,
} from './order-entries.js';
export { canMoveEntry, ENTRY_MOVES, type EntryMove, type EntryMoveRule } from './order-transitions.js';
