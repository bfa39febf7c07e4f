import * as v from 'valibot';
import { ValidationError } from './errors.js';

/** The dotted path of the first issue (`pricingConfig.value`), the contract's `param`. */
const paramOf = (issue: v.BaseIssue<unknown>, prefix?: string) => {
  const path = (issue.path ?? []).map((item) => String(item.key)).join('.');
  return [prefix, path].filter(Boolean).join('.') || undefined;
};

/** Parses input with a valibot schema; the first issue becomes a 400 naming its `param`. */
export const parseInput = <S extends v.GenericSchema>(schema: S, input: unknown, prefix?: string): v.InferOutput<S> => {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const param = paramOf(issue, prefix);
  throw new ValidationError(param ? `Invalid ${param}: ${issue.message}` : issue.message, param);
};
