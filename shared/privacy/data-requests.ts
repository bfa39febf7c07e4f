import { ResourceMissingError } from '../core/errors.js';
import type { Owner } from '../domain/owner.js';
import { loadDataRequest } from '../entities/data-request.js';
import { findResellerStore } from '../stores/stores.js';

/** The longest data request id a path may name: the platform's ids are digits, far shorter. */
const MAX_ID_LENGTH = 100;

/**
 * The caller's reseller store's data request (CONTRACT.md §13) while it is kept (30 days), or 404:
 * another owner's store, or a request past its 30 days, is as missing as an unknown id.
 */
export const findDataRequest = async (owner: Owner, resellerStoreId: string, id: string) => {
  await findResellerStore(owner, resellerStoreId, 'rst_id');
  const request = id.length <= MAX_ID_LENGTH ? await loadDataRequest(resellerStoreId, id) : undefined;
  if (!request) throw new ResourceMissingError('data_request', id);
  return request;
};
