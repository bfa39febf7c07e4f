import type { Item } from './table.js';

/**
 * Typed reads of an item's attributes, for the record modules' `…From(item)` conversions. A
 * missing or mistyped attribute is a corrupt item: the error names the entity and the attribute,
 * never the value (it may be a secret's ciphertext).
 */
export const attributes = (item: Item, entity: string) => {
  const corrupt = (name: string, expected: string): never => {
    throw new Error(`corrupt ${entity} item: ${name} is not ${expected}`);
  };
  return {
    string: (name: string): string => {
      const value = item[name];
      return typeof value === 'string' ? value : corrupt(name, 'a string');
    },
    /** Null when absent: attributes written as null, or not written by older code. */
    stringOrNull: (name: string): string | null => {
      const value = item[name];
      if (value === undefined || value === null) return null;
      return typeof value === 'string' ? value : corrupt(name, 'a string or null');
    },
    number: (name: string): number => {
      const value = item[name];
      return typeof value === 'number' ? value : corrupt(name, 'a number');
    },
    /** One of a fixed set of strings (a status, a platform). */
    oneOf: <T extends string>(name: string, allowed: readonly T[]): T => {
      const value = item[name];
      return allowed.includes(value as T) ? (value as T) : corrupt(name, `one of ${allowed.join(', ')}`);
    },
    /**
     * A map or list this service wrote itself (an order, a pricing config, tracking): checked to
     * be an object, its shape trusted to be what the record's own writer put there.
     */
    object: <T extends object>(name: string): T => {
      const value = item[name];
      return typeof value === 'object' && value !== null ? (value as T) : corrupt(name, 'a map or a list');
    },
    optionalObject: <T extends object>(name: string): T | undefined => {
      const value = item[name];
      if (value === undefined || value === null) return undefined;
      return typeof value === 'object' ? (value as T) : corrupt(name, 'a map or a list');
    },
  };
};
