import type { Item } from './table.js';

/**
 * Typed reads of an item's attributes, for the record modules' `…From(item)` conversions. A
 * missing or mistyped attribute is a corrupt item: the error names the entity and the attribute,
 * never the value (it may be a secret's ciphertext).
 */
export const attributes = (item: Item, entity: string) => {
  /** The attribute when `ok` says it has the wanted type; a corrupt item otherwise. */
  const read = <T>(name: string, ok: (value: unknown) => boolean): T => {
    const value = item[name];
    if (ok(value)) return value as T;
    throw new Error(`corrupt ${entity} item: attribute ${name} is missing or of the wrong type`);
  };
  const isString = (value: unknown) => typeof value === 'string';
  const isObject = (value: unknown) => typeof value === 'object' && value !== null;
  const absent = (value: unknown) => value === undefined || value === null;
  return {
    string: (name: string) => read<string>(name, isString),
    /** Null when absent: attributes written as null, or not written by older code. */
    stringOrNull: (name: string) => read<string | null>(name, (value) => absent(value) || isString(value)) ?? null,
    number: (name: string) => read<number>(name, (value) => typeof value === 'number'),
    /** One of a fixed set of strings (a status, a platform). */
    oneOf: <T extends string>(name: string, allowed: readonly T[]) =>
      read<T>(name, (value) => allowed.includes(value as T)),
    /**
     * A map or list this service wrote itself (an order, a pricing config, tracking): checked to
     * be an object, its shape trusted to be what the record's own writer put there.
     */
    object: <T extends object>(name: string) => read<T>(name, isObject),
    optionalObject: <T extends object>(name: string) =>
      read<T | null>(name, (value) => absent(value) || isObject(value)) ?? undefined,
  };
};
