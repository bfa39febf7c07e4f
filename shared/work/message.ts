/**
 * What every work message may carry, whatever its kind: the request that sent it (for its handler's
 * log lines) and, for a 429's wait longer than one message delay, the time before which it is not to
 * be tried (epoch ms); one that arrives earlier is sent on again, untouched.
 */
export interface WorkMessage {
  requestId?: string;
  notBefore?: number;
  /**
   * The supplier's call slot (epoch ms) this message keeps, taken from its shop's pace before the
   * item was sent to wait for it (slot-wait.ts): the try calls at that time without taking another.
   */
  slotAt?: number;
}

export type Fields = Record<string, unknown>;

export const isText = (value: unknown): value is string => typeof value === 'string';

/** `{ key: value }` when the field is text, else nothing: an optional field of another type is dropped. */
export const optionalText = (parsed: Fields, key: string) => (isText(parsed[key]) ? { [key]: parsed[key] } : {});

/** The fields every kind's message shares, when present and of their type. */
export const workFields = (parsed: Fields): WorkMessage => ({
  ...optionalText(parsed, 'requestId'),
  ...(Number.isSafeInteger(parsed.notBefore) ? { notBefore: Number(parsed.notBefore) } : {}),
  ...(Number.isSafeInteger(parsed.slotAt) ? { slotAt: Number(parsed.slotAt) } : {}),
});

/**
 * A message body read as JSON and handed to the kind's reader; undefined for a body that is not
 * JSON or that the reader refuses: a malformed message can never be processed.
 */
export const parseWith = <M>(body: string, read: (parsed: Fields) => M | undefined): M | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  return parsed && typeof parsed === 'object' ? read(parsed as Fields) : undefined;
};
