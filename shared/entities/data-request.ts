import { keys } from '../dynamo/keys.js';
import { getItem, type Item, putIf, recordShape } from '../dynamo/table.js';

/**
 * The data request entity (CONTRACT.md §13): what a platform's `customers/data_request` asked of one
 * reseller store, and which of the listed orders the service holds with the names (never the values)
 * of the personal fields it keeps of each. Readable at `GET /v1/reseller_stores/{rst_id}/data_requests/{id}`
 * for 30 days, then gone through the table's TTL (`expiresAt`).
 */

export const DATA_REQUEST_RETENTION_SECONDS = 30 * 86_400;

export interface DataRequestOrder {
  externalOrderId: string;
  /** Whether the service holds a record of the order. */
  held: boolean;
  syncJobIds: string[];
  /** The personal members it keeps of the order (`email`, `shipping_address`, `orderEdits.email`…). */
  personalFields: string[];
  redactedAt: string | null;
}

export interface DataRequest {
  /** The platform's id of the request (`data_request.id`), as its digits stand. */
  id: string;
  ownerId: string;
  resellerStoreId: string;
  /** The platform's id of the customer, as its digits stand; null when the request named none. */
  customerId: string | null;
  orders: DataRequestOrder[];
  receivedAt: string;
  /** Epoch seconds: the table's TTL attribute. */
  expiresAt: number;
}

export const dataRequestKey = (resellerStoreId: string, id: string) => keys.dataRequest(resellerStoreId, id);

const shape = recordShape<DataRequest>()('data request', {
  strings: ['id', 'ownerId', 'resellerStoreId', 'receivedAt'],
  nullableStrings: ['customerId'],
  objects: ['orders'],
  numbers: ['expiresAt'],
});

export const dataRequestItem = (request: DataRequest): Item => ({
  ...dataRequestKey(request.resellerStoreId, request.id),
  ...shape.fields(request),
});

export const dataRequestFrom = shape.from;

/** Writes the record (a redelivery writes it again, as the orders stand then). */
export const putDataRequest = async (request: DataRequest) => {
  await putIf(dataRequestItem(request), null);
};

/** The record, while it is kept: one past its expiry (the TTL deletes within days) is as missing. */
export const loadDataRequest = async (resellerStoreId: string, id: string, at = Date.now()) => {
  const request = await getItem(dataRequestKey(resellerStoreId, id), dataRequestFrom);
  return request && request.expiresAt * 1000 > at ? request : undefined;
};
