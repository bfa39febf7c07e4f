import * as v from 'valibot';
import { config } from '../core/config.js';
import { PLATFORMS } from '../platforms/types.js';

/** Request schemas: the request types (`v.InferOutput`) and the documented shapes in one place. */

const strict = <E extends v.ObjectEntries>(entries: E) =>
  v.strictObject(entries, (issue) =>
    issue.expected === 'never'
      ? `unknown field '${String(issue.path?.at(-1)?.key)}'`
      : issue.path
        ? 'is required'
        : 'must be a JSON object',
  );

const requiredString = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.check((s) => s.trim().length > 0, 'must not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
  );

const LABEL = /^[a-z0-9][a-z0-9-]*$/;

/** `<label>.<suffix>`: compared case-insensitively and stored lower-cased (CONTRACT.md §1-§2). */
export const isShopDomain = (value: string) => {
  const suffix = `.${config.shopDomainSuffix().toLowerCase()}`;
  if (!value.endsWith(suffix)) return false;
  const label = value.slice(0, -suffix.length);
  return label.length <= 63 && LABEL.test(label);
};

export const ShopDomain = v.pipe(
  v.string('must be a string'),
  v.toLowerCase(),
  v.check(isShopDomain, () => `must be a shop domain like 'example.${config.shopDomainSuffix()}'`),
);

const Platform = v.picklist(PLATFORMS, `must be one of ${PLATFORMS.join(', ')}`);
const Secret = requiredString(2048);
const nonNegative = (max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.finite('must be finite'),
    v.minValue(0, 'must be at least 0'),
    v.maxValue(max, `must be at most ${max}`),
  );

export const PricingConfig = v.variant(
  'type',
  [
    strict({ type: v.literal('percentage'), value: nonNegative(1000) }),
    strict({
      type: v.literal('field_rules'),
      productCost: nonNegative(1_000_000),
      shippingCost: nonNegative(1_000_000),
    }),
  ],
  'must be percentage or field_rules',
);

export const PRICING_MODES = ['percentage', 'field_rules'] as const;

export const CreateResellerStoreBody = strict({
  name: requiredString(255),
  platform: Platform,
  shopDomain: ShopDomain,
  accessToken: Secret,
  webhookSecret: Secret,
});
export type CreateResellerStoreInput = v.InferOutput<typeof CreateResellerStoreBody>;

export const UpdateResellerStoreBody = strict({ name: v.optional(requiredString(255)) });

export const CreateSourceStoreBody = v.pipe(
  strict({
    name: requiredString(255),
    platform: Platform,
    shopDomain: ShopDomain,
    accessToken: Secret,
    webhookSecret: Secret,
    vendorTag: requiredString(255),
    pricingMode: v.picklist(PRICING_MODES, `must be one of ${PRICING_MODES.join(', ')}`),
    pricingConfig: PricingConfig,
  }),
  v.forward(
    v.partialCheck(
      [['pricingMode'], ['pricingConfig', 'type']],
      (input) => input.pricingConfig.type === input.pricingMode,
      'must equal pricingMode',
    ),
    ['pricingConfig', 'type'],
  ),
);
export type CreateSourceStoreInput = v.InferOutput<typeof CreateSourceStoreBody>;

/** `limit` and `starting_after` (SPEC 8.1) plus a list's own filters; unknown parameters are refused. */
export const listQuery = <E extends v.ObjectEntries>(filters: E) =>
  strict({
    limit: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^\d{1,3}$/, 'must be an integer from 1 to 100'),
        v.transform(Number),
        v.minValue(1, 'must be an integer from 1 to 100'),
        v.maxValue(100, 'must be an integer from 1 to 100'),
      ),
      '20',
    ),
    starting_after: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
    ...filters,
  });

export const SYNC_JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'dead'] as const;
export type SyncJobStatus = (typeof SYNC_JOB_STATUSES)[number];

export const AUDIT_ACTIONS = ['sync_job.retried', 'sync_job.dead'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const ListSyncJobsQuery = listQuery({
  status: v.optional(v.picklist(SYNC_JOB_STATUSES, `must be one of ${SYNC_JOB_STATUSES.join(', ')}`)),
  reseller_store_id: v.optional(v.string()),
});

export const ListAuditLogQuery = listQuery({
  action: v.optional(v.picklist(AUDIT_ACTIONS, `must be one of ${AUDIT_ACTIONS.join(', ')}`)),
  resource_type: v.optional(v.picklist(['sync_job'], 'must be sync_job')),
  resource_id: v.optional(v.string()),
  reseller_store_id: v.optional(v.string()),
});

export const PlainListQuery = listQuery({});
