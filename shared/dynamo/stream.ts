import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Item } from './table.js';

/** A stream write's attribute value as JSON carries it: binary values are base64 text. */
type WireValue = Record<string, unknown>;

/** The wire form's binaries as bytes, through maps and lists, as the SDK's own reads answer them. */
const withBytes = (value: WireValue): AttributeValue => {
  if (typeof value.B === 'string') return { B: Buffer.from(value.B, 'base64') };
  if (Array.isArray(value.BS)) return { BS: value.BS.map((b) => Buffer.from(String(b), 'base64')) };
  if (Array.isArray(value.L)) return { L: value.L.map((v) => withBytes(v as WireValue)) };
  if (value.M && typeof value.M === 'object') return { M: imageWithBytes(value.M as Record<string, WireValue>) };
  return value as unknown as AttributeValue;
};

const imageWithBytes = (image: Record<string, WireValue>) =>
  Object.fromEntries(Object.entries(image).map(([name, value]) => [name, withBytes(value)]));

/**
 * A stream write's images (NEW_AND_OLD_IMAGES: lib/constructs/data.ts), as the document
 * client reads items: the item before the write and after it, either missing (an insert, a removal).
 */
export const imagesOf = (written: DynamoDBRecord): { before?: Item; after?: Item } => {
  const image = (raw: unknown): Item | undefined =>
    raw ? unmarshall(imageWithBytes(raw as Record<string, WireValue>)) : undefined;
  return { before: image(written.dynamodb?.OldImage), after: image(written.dynamodb?.NewImage) };
};
