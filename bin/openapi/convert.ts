import { type ConversionConfig, type JsonSchema, toJsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { config } from '../../shared/core/config.js';
import { PRICING_DECIMALS } from '../../shared/domain/money.js';
import { PRICING_MODES } from '../../shared/entities/store.js';
import {
  DESCRIBED_CHECKS,
  EveryEventType,
  Limit,
  MarkupDecimals,
  PricingConfig,
  PricingTogether,
  ShopDomain,
  SomeSecret,
  TOKEN_RULES,
} from '../../shared/http/schemas.js';
import { EVERY_EVENT_TYPE } from './components.js';

/**
 * valibot → JSON Schema 2020-12 for the OpenAPI document: the input side of each schema (what a
 * client sends), with the rules valibot keeps in functions written out as JSON Schema. A rule that
 * cannot be converted fails the generation (`errorMode: 'throw'`) instead of silently vanishing.
 */

/** JSON Schema patterns take no flags, so the suffix is matched case-insensitively letter by letter. */
const caseInsensitive = (text: string) =>
  [...text].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : `\\${c}`)).join('');

/** The shop-domain rule of shared/http/schemas.ts (`isShopDomain`), for the configured suffix. */
export const shopDomainSchema = () => {
  const suffix = config.shopDomainSuffix().toLowerCase();
  return {
    type: 'string',
    maxLength: 63 + 1 + suffix.length,
    pattern: `^[a-zA-Z0-9][a-zA-Z0-9-]{0,62}\\.${caseInsensitive(suffix)}$`,
    description:
      `\`<label>.${suffix}\`: the label is letters, digits and hyphens, at most 63 characters, not starting ` +
      'with a hyphen; compared case-insensitively, stored lower-cased',
    examples: [`example.${suffix}`],
  };
};

/** Named schemas, referenced wherever they occur and listed under `components.schemas`. */
const definitions = {
  percentage_pricing_config: PricingConfig.options[0],
  field_rules_pricing_config: PricingConfig.options[1],
};

/** The query string carries it as text; the document says what the text must say. */
const limitSchema: JsonSchema = { type: 'integer', minimum: 1, maximum: 100, default: 20 };

/** Pipes whose rules live in functions (or in text): each of their actions yields the schema written here. */
const written: [readonly unknown[], JsonSchema][] = [
  [ShopDomain.pipe, { $ref: '#/components/schemas/shop_domain' }],
  [Limit.pipe, limitSchema],
];

/** A rule added to a schema: `dependentRequired` merged with the one there, field by field. */
const withRule = (schema: JsonSchema, rule: Record<string, unknown>): JsonSchema => {
  const before = (schema as { dependentRequired?: Record<string, string[]> }).dependentRequired ?? {};
  const added = (rule.dependentRequired ?? {}) as Record<string, string[]>;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(added)])];
  const merged = Object.fromEntries(
    fields.map((field) => [field, [...new Set([...(before[field] ?? []), ...(added[field] ?? [])])]]),
  );
  return { ...schema, ...rule, ...(fields.length ? { dependentRequired: merged } : {}) } as JsonSchema;
};

const conversion: ConversionConfig = {
  target: 'draft-2020-12',
  typeMode: 'input',
  errorMode: 'throw',
  definitions,
  // Every JSON number is finite.
  ignoreActions: ['finite'],
  overrideSchema: ({ valibotSchema }) => {
    if ('wrapped' in valibotSchema && valibotSchema.wrapped === Limit) return limitSchema;
    // A tuple is `prefixItems` with `items: false`: valid 2020-12, yet linters (Spectral's array-items)
    // and code generators want an `items` schema. One `"*"` and nothing else, said their way.
    if (valibotSchema === EveryEventType) return EVERY_EVENT_TYPE as JsonSchema;
    return undefined;
  },
  overrideAction: ({ valibotAction, jsonSchema }) => {
    for (const [pipe, replacement] of written) if (pipe.includes(valibotAction)) return replacement;
    if (valibotAction === SomeSecret) return { ...jsonSchema, minProperties: 1 };
    const describedCheck = DESCRIBED_CHECKS.get(valibotAction);
    if (describedCheck) return { ...jsonSchema, ...describedCheck } as JsonSchema;
    const tokenRule = TOKEN_RULES.get(valibotAction);
    if (tokenRule) return withRule(jsonSchema, tokenRule);
    if (valibotAction === PricingTogether)
      return { ...jsonSchema, dependentRequired: { pricingMode: ['pricingConfig'], pricingConfig: ['pricingMode'] } };
    if (valibotAction === MarkupDecimals)
      return { ...jsonSchema, description: `At most ${PRICING_DECIMALS} decimal places (docs/hostile-input.md).` };
    // CreateSourceStoreBody's "pricingConfig.type must equal pricingMode" (CONTRACT.md §7), as a rule a
    // validating proxy applies too: for each mode, the config's type is that mode.
    if (valibotAction.type === 'partial_check')
      return {
        ...jsonSchema,
        description: 'For each `pricingMode`, `pricingConfig.type` equals it.',
        allOf: PRICING_MODES.map((mode) => ({
          if: { properties: { pricingMode: { const: mode } }, required: ['pricingMode'] },
          // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
          then: { properties: { pricingConfig: { type: 'object', properties: { type: { const: mode } } } } },
        })),
      };
    return undefined;
  },
};

/** Draft 2020-12 `$defs` references become OpenAPI component references. */
const toComponentRefs = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(toComponentRefs);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== '$schema' && key !== '$defs')
      .map(([key, value]) =>
        key === '$ref' && typeof value === 'string'
          ? [key, value.replace(/^#\/\$defs\//, '#/components/schemas/')]
          : [key, toComponentRefs(value)],
      ),
  );
};

export const convert = (schema: v.GenericSchema) => toComponentRefs(toJsonSchema(schema, conversion)) as JsonSchema;

/** The named schemas (`definitions` above) plus the shop domain, for `components.schemas`. */
export const requestComponents = () => ({
  shop_domain: shopDomainSchema(),
  ...(toComponentRefs(toJsonSchemaDefs(definitions, conversion)) as Record<string, JsonSchema>),
});
