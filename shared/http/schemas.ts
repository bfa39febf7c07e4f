import * as v from 'valibot';
import { config } from '../core/config.js';
import { ANY_ID_PATTERN, idPattern } from '../core/ids.js';
import { decimalPlaces, PRICING_DECIMALS } from '../domain/money.js';
import { SYNC_JOB_STATUSES } from '../domain/orders.js';
import { MAX_HOLD_DELAY_SECONDS, PAYMENT_POLICIES, RISK_POLICIES, TEST_ORDER_POLICIES } from '../domain/routing.js';
import { isLocalDate, isTimeZone, WEEKDAYS } from '../domain/shipping.js';
import { isShopDomainUnder } from '../domain/webhook-checks.js';
import { AUDIT_ACTIONS, AUDITED_RESOURCES } from '../entities/audit-entry.js';
import { EVENT_GROUPS, EVENT_TYPES } from '../entities/event.js';
import { PRICING_MODES } from '../entities/store.js';
import { ENDPOINT_STATUSES } from '../entities/webhook-endpoint.js';
import { PLATFORMS } from '../platforms/port.js';

/**
 * Request schemas: the request types (`v.InferOutput`) and the documented shapes in one place.
 * Wire names (`starting_after`, `reseller_store_id`…) end here: each schema's output is in the
 * use cases' camelCase terms.
 */

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
    // A regex rather than a trim check, so the OpenAPI document can state the rule (\s is what trim removes).
    v.regex(/\S/, 'must not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
  );

/** `<label>.<suffix>`: compared case-insensitively and stored lower-cased (CONTRACT.md §1-§2). */
export const isShopDomain = (value: string) => isShopDomainUnder(value, config.shopDomainSuffix());

export const ShopDomain = v.pipe(
  v.string('must be a string'),
  v.toLowerCase(),
  v.check(isShopDomain, () => `must be a shop domain like 'example.${config.shopDomainSuffix()}'`),
);

const Platform = v.picklist(PLATFORMS, `must be one of ${PLATFORMS.join(', ')}`);
/** Accepted on creation, never returned; the metadata is for the OpenAPI document only (SPEC 4.1). */
const Secret = v.pipe(
  requiredString(2048),
  v.metadata({ format: 'password', writeOnly: true, description: 'accepted on creation, never returned' }),
);
/**
 * A markup figure: at most PRICING_DECIMALS decimal places (the largest ISO 4217 exponent), so
 * every configured cost is an exact amount in any currency, and DynamoDB never sees a number it
 * cannot store (`5e-324` underflows it).
 */
export const MarkupDecimals = v.check(
  (n: number) => decimalPlaces(n) <= PRICING_DECIMALS,
  `must have at most ${PRICING_DECIMALS} decimal places`,
);
const nonNegative = (max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.finite('must be finite'),
    v.minValue(0, 'must be at least 0'),
    v.maxValue(max, `must be at most ${max}`),
    MarkupDecimals,
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

const oneOf = <T extends string>(values: readonly T[]) => v.picklist(values, `must be one of ${values.join(', ')}`);

/**
 * A reseller store's routing policy (CONTRACT.md §11): any subset of its fields; the rest keep their
 * values (PATCH) or defaults (POST).
 */
export const RoutingPolicyBody = strict({
  holdSeconds: v.optional(
    v.pipe(
      v.number('must be a whole number'),
      v.integer('must be a whole number'),
      v.minValue(0, 'must be at least 0'),
      v.maxValue(MAX_HOLD_DELAY_SECONDS, `must be at most ${MAX_HOLD_DELAY_SECONDS}`),
    ),
  ),
  payment: v.optional(oneOf(PAYMENT_POLICIES)),
  risk: v.optional(oneOf(RISK_POLICIES)),
  testOrders: v.optional(oneOf(TEST_ORDER_POLICIES)),
});

/**
 * An expiring access token's extras (CONTRACT.md §12.3), on creation and with a new access token: its
 * refresh token with the app's client id and secret (write-only, encrypted as the token is), and when it expires.
 */
const TokenGrantFields = {
  refreshToken: v.optional(Secret),
  clientId: v.optional(Secret),
  clientSecret: v.optional(Secret),
  accessTokenExpiresAt: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.isoTimestamp('must be an ISO 8601 timestamp with a time zone (2027-01-01T00:00:00Z)'),
      v.metadata({ description: 'when the access token expires; absent: it does not, or is not known to' }),
    ),
  ),
};

type TokenGrantInput = { refreshToken?: string; clientId?: string; clientSecret?: string };

/**
 * The rules of the expiring token's extras that valibot keeps in functions, each with what the OpenAPI
 * document writes for it (bin/openapi/convert.ts reads this map).
 */
export const TOKEN_RULES = new Map<unknown, Record<string, unknown>>();

const GRANT = ['refreshToken', 'clientId', 'clientSecret'] as const;

/** `refreshToken`, `clientId` and `clientSecret` come together or not at all (OpenAPI: `dependentRequired`). */
const tokenGrantTogether = <T extends TokenGrantInput>() => {
  const rule = v.forward(
    v.check(
      (input: T) => new Set(GRANT.map((field) => input[field] === undefined)).size === 1,
      'goes with clientId and clientSecret (all three, or none)',
    ),
    // The path every input of the rule has (T's constraint): valibot cannot see it through a type parameter.
    ['refreshToken'] as never,
  );
  TOKEN_RULES.set(rule, {
    dependentRequired: Object.fromEntries(GRANT.map((field) => [field, GRANT.filter((other) => other !== field)])),
  });
  return rule;
};

/** A custom store's pushes are signed, not tokened: its token is never refreshed (OpenAPI: if/then). */
const noRefreshOnCustom = <T extends { platform: string; refreshToken?: string }>() => {
  const rule = v.forward(
    v.check(
      (input: T) => input.platform !== 'custom' || input.refreshToken === undefined,
      'is not taken for a custom store (its token is not refreshed)',
    ),
    // The path every input of the rule has (T's constraint): valibot cannot see it through a type parameter.
    ['refreshToken'] as never,
  );
  TOKEN_RULES.set(rule, {
    if: { properties: { platform: { const: 'custom' } }, required: ['platform'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
    then: { properties: { refreshToken: false } },
  });
  return rule;
};

/** An expiring token's extras come with the access token they are of (OpenAPI: `dependentRequired`). */
const tokenWithItsExtras = <
  T extends { accessToken?: string; refreshToken?: string; accessTokenExpiresAt?: string },
>() => {
  const rule = v.forward(
    v.check(
      (input: T) =>
        input.accessToken !== undefined ||
        (input.refreshToken === undefined && input.accessTokenExpiresAt === undefined),
      'goes with the accessToken it refreshes',
    ),
    // The path every input of the rule has (T's constraint): valibot cannot see it through a type parameter.
    ['refreshToken'] as never,
  );
  TOKEN_RULES.set(rule, {
    dependentRequired: { refreshToken: ['accessToken'], accessTokenExpiresAt: ['accessToken'] },
  });
  return rule;
};

/** What every store is created with: its name and its connection to its shop. */
const StoreConnectionFields = {
  name: requiredString(255),
  platform: Platform,
  shopDomain: ShopDomain,
  accessToken: Secret,
  webhookSecret: Secret,
  ...TokenGrantFields,
};

const ResellerStoreFields = strict({
  ...StoreConnectionFields,
  routingPolicy: v.optional(RoutingPolicyBody),
});
type ResellerStoreInput = v.InferOutput<typeof ResellerStoreFields>;

export const CreateResellerStoreBody = v.pipe(
  ResellerStoreFields,
  tokenGrantTogether<ResellerStoreInput>(),
  noRefreshOnCustom<ResellerStoreInput>(),
);

export const UpdateResellerStoreBody = strict({
  name: v.optional(requiredString(255)),
  routingPolicy: v.optional(RoutingPolicyBody),
});

/**
 * A supplier's promise (CONTRACT.md §16.1): the zone optional (the shop's own, read from its
 * platform), required for a `custom` store; an unknown zone or a bad cut-off is a 400 with its param.
 */
/** Checks only code can run, each with the JSON Schema words that describe it (bin/openapi/convert.ts). */
export const DESCRIBED_CHECKS = new Map<unknown, Record<string, unknown>>();
const described = <A>(action: A, schema: Record<string, unknown>) => {
  DESCRIBED_CHECKS.set(action, schema);
  return action;
};

export const ServiceLevelBody = strict({
  shipWithinBusinessDays: v.pipe(
    v.number('must be a number'),
    v.integer('must be a whole number'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(30, 'must be at most 30'),
  ),
  cutoffTime: v.optional(v.pipe(v.string('must be a string'), v.regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM'))),
  timeZone: v.optional(
    v.pipe(
      v.string('must be a string'),
      described(v.check(isTimeZone, 'must be an IANA time zone'), { description: 'an IANA time zone' }),
    ),
  ),
  workingDays: v.optional(
    v.pipe(
      v.array(v.picklist(WEEKDAYS, `must be one of ${WEEKDAYS.join(', ')}`), 'must be a list'),
      v.minLength(1, 'must name at least one day'),
      v.maxLength(7, 'must name at most 7 days'),
    ),
  ),
  daysOff: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string('must be a string'),
          described(v.check(isLocalDate, 'must be a date YYYY-MM-DD'), { format: 'date' }),
        ),
        'must be a list',
      ),
      v.maxLength(60, 'must be at most 60 dates'),
    ),
  ),
});
export type ServiceLevelInput = v.InferOutput<typeof ServiceLevelBody>;

/** A custom store has no platform to read its zone from: its promise names one. */
const zoneOnCustom = <T extends { platform: string; serviceLevel?: ServiceLevelInput | null }>() =>
  described(
    v.forward(
      v.check(
        (input: T) => input.platform !== 'custom' || !input.serviceLevel || input.serviceLevel.timeZone !== undefined,
        'is required for a custom store',
      ),
      ['serviceLevel', 'timeZone'] as never,
    ),
    { description: 'A `custom` store’s `serviceLevel` names its `timeZone`.' },
  );

const SourceStoreFields = strict({
  ...StoreConnectionFields,
  serviceLevel: v.optional(v.nullable(ServiceLevelBody)),
  vendorTag: requiredString(255),
  pricingMode: v.picklist(PRICING_MODES, `must be one of ${PRICING_MODES.join(', ')}`),
  pricingConfig: PricingConfig,
});
type SourceStoreInput = v.InferOutput<typeof SourceStoreFields>;

export const CreateSourceStoreBody = v.pipe(
  SourceStoreFields,
  v.forward(
    v.partialCheck(
      [['pricingMode'], ['pricingConfig', 'type']],
      (input) => input.pricingConfig.type === input.pricingMode,
      'must equal pricingMode',
    ),
    ['pricingConfig', 'type'],
  ),
  tokenGrantTogether<SourceStoreInput>(),
  noRefreshOnCustom<SourceStoreInput>(),
  zoneOnCustom<SourceStoreInput>(),
);

/**
 * `PATCH …/source_stores/{id}` (CONTRACT.md §10.9): `name`, `vendorTag`, and `pricingMode` with its
 * `pricingConfig` (together, the config's type equal to the mode); nothing else, no secret.
 */
const SourceStoreChanges = strict({
  name: v.optional(requiredString(255)),
  vendorTag: v.optional(requiredString(255)),
  pricingMode: v.optional(v.picklist(PRICING_MODES, `must be one of ${PRICING_MODES.join(', ')}`)),
  pricingConfig: v.optional(PricingConfig),
  serviceLevel: v.optional(v.nullable(ServiceLevelBody)),
});

/** `pricingMode` and `pricingConfig` come together or not at all (the OpenAPI document: `dependentRequired`). */
type SourceStoreChangesInput = v.InferOutput<typeof SourceStoreChanges>;
export const PricingTogether = v.forward(
  v.check(
    (input: SourceStoreChangesInput) => (input.pricingMode === undefined) === (input.pricingConfig === undefined),
    'goes with pricingConfig',
  ),
  ['pricingMode'],
);

export const UpdateSourceStoreBody = v.pipe(
  SourceStoreChanges,
  PricingTogether,
  v.forward(
    v.partialCheck(
      [['pricingMode'], ['pricingConfig', 'type']],
      (input) => input.pricingConfig === undefined || input.pricingConfig.type === input.pricingMode,
      'must equal pricingMode',
    ),
    ['pricingConfig', 'type'],
  ),
);

/** `POST …/credentials` (CONTRACT.md §10.9): a new access token, a new webhook secret, or both. */
/** At least one secret (the OpenAPI document: `minProperties`). */
export const SomeSecret = v.check(
  (input: { accessToken?: string; webhookSecret?: string }) =>
    input.accessToken !== undefined || input.webhookSecret !== undefined,
  'needs accessToken, webhookSecret or both',
);

const RotationFields = strict({
  accessToken: v.optional(Secret),
  webhookSecret: v.optional(Secret),
  ...TokenGrantFields,
});
type RotationInput = v.InferOutput<typeof RotationFields>;

export const RotateCredentialsBody = v.pipe(
  RotationFields,
  SomeSecret,
  tokenGrantTogether<RotationInput>(),
  tokenWithItsExtras<RotationInput>(),
);

/** SPEC 8.1's `limit`, as the query string carries it. */
export const Limit = v.pipe(
  v.string(),
  v.regex(/^\d{1,3}$/, 'must be an integer from 1 to 100'),
  v.transform(Number),
  v.minValue(1, 'must be an integer from 1 to 100'),
  v.maxValue(100, 'must be an integer from 1 to 100'),
);

/** A filter naming a resource by id: a value that cannot be one is refused before any read. */
const rstFilter = v.optional(v.pipe(v.string(), v.regex(idPattern('rst'), 'must be a reseller store id (rst_…)')));

/** `limit` and `starting_after` (SPEC 8.1) plus a list's own filters; unknown parameters are refused. */
const listQuery = <E extends v.ObjectEntries>(filters: E) =>
  strict({
    limit: v.optional(Limit, '20'),
    starting_after: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
    ...filters,
  });

/** The page part of a list query, in the use cases' terms. */
const page = (query: { limit: number; starting_after?: string }) => ({
  limit: query.limit,
  startingAfter: query.starting_after,
});

export const ListSyncJobsQuery = v.pipe(
  listQuery({
    status: v.optional(v.picklist(SYNC_JOB_STATUSES, `must be one of ${SYNC_JOB_STATUSES.join(', ')}`)),
    reseller_store_id: rstFilter,
    held: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
    credit_due: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
    late: v.optional(v.picklist(['true'], 'must be true')),
  }),
  v.transform((query) => ({
    ...page(query),
    filters: {
      status: query.status,
      resellerStoreId: query.reseller_store_id,
      ...(query.held === undefined ? {} : { held: query.held === 'true' }),
      ...(query.credit_due === undefined ? {} : { creditDue: query.credit_due === 'true' }),
      ...(query.late === undefined ? {} : { late: true as const }),
    },
  })),
);

/** `POST /v1/sync_jobs/{id}/hold` (CONTRACT.md §11): the body is optional; its `note` goes to the audit entry. */
export const HoldSyncJobBody = v.optional(strict({ note: v.optional(requiredString(1000)) }));

/** `GET /v1/reseller_stores/{rst_id}/orders` (CONTRACT.md §10.8): `unrouted=true`, only orders with unrouted items. */
export const ListOrdersQuery = v.pipe(
  listQuery({ unrouted: v.optional(v.picklist(['true', 'false'], 'must be true or false')) }),
  v.transform((query) => ({ ...page(query), filters: { unrouted: query.unrouted === 'true' } })),
);

export const ListAuditLogQuery = v.pipe(
  listQuery({
    action: v.optional(v.picklist(AUDIT_ACTIONS, `must be one of ${AUDIT_ACTIONS.join(', ')}`)),
    resource_type: v.optional(v.picklist(AUDITED_RESOURCES, `must be ${AUDITED_RESOURCES.join(', ')}`)),
    resource_id: v.optional(v.pipe(v.string(), v.regex(ANY_ID_PATTERN, 'must be an id (sj_…)'))),
    reseller_store_id: rstFilter,
  }),
  v.transform((query) => ({
    ...page(query),
    filters: {
      action: query.action,
      resourceType: query.resource_type,
      resourceId: query.resource_id,
      resellerStoreId: query.reseller_store_id,
    },
  })),
);

export const PlainListQuery = v.pipe(listQuery({}), v.transform(page));

/** An ISO 8601 date-time with its offset, read as the instant it names (stored times are UTC with milliseconds). */
const Instant = v.pipe(
  v.string('must be a string'),
  v.isoTimestamp('must be an ISO 8601 date-time with a time zone, like 2026-11-21T04:02:45.123Z'),
  v.transform((value) => new Date(value).toISOString()),
);

/** `type`: one event type, or every type of a group (`sync_job.*`). */
const EVENT_TYPE_FILTERS = [...EVENT_TYPES, ...EVENT_GROUPS.map((group) => `${group}.*`)];

/** `GET /v1/events` (CONTRACT.md §14). */
export const ListEventsQuery = v.pipe(
  listQuery({
    type: v.optional(v.picklist(EVENT_TYPE_FILTERS, 'must be an event type, or a group of them like sync_job.*')),
    created_gte: v.optional(Instant),
    created_lt: v.optional(Instant),
    delivery_success: v.optional(v.picklist(['false'], 'must be false')),
  }),
  v.transform((query) => ({
    ...page(query),
    filters: {
      type:
        query.type === undefined
          ? undefined
          : query.type.endsWith('.*')
            ? { group: query.type.slice(0, -2) }
            : { exact: query.type as (typeof EVENT_TYPES)[number] },
      createdGte: query.created_gte,
      createdLt: query.created_lt,
      failing: query.delivery_success === 'false',
    },
  })),
);

const EndpointUrl = v.pipe(
  requiredString(2048),
  v.metadata({ description: 'https:// (locally also http://127.0.0.1 and http://localhost); no private address' }),
);
/** `["*"]`: every type. The OpenAPI document writes it as an array of one `"*"` (bin/openapi/convert.ts). */
export const EveryEventType = v.strictTuple([v.literal('*')]);
const EnabledEvents = v.union(
  [EveryEventType, v.pipe(v.array(v.picklist(EVENT_TYPES)), v.minLength(1, 'must name at least one event type'))],
  'must be ["*"] or a list of event types',
);
const EndpointDescription = v.pipe(v.string('must be a string'), v.maxLength(255, 'must be at most 255 characters'));

/** `POST /v1/webhook_endpoints` (CONTRACT.md §14). */
export const CreateWebhookEndpointBody = strict({
  url: EndpointUrl,
  enabledEvents: EnabledEvents,
  description: v.optional(EndpointDescription),
});

/** `PATCH /v1/webhook_endpoints/{id}`: the URL, the events, the description, enabled or disabled. */
export const UpdateWebhookEndpointBody = strict({
  url: v.optional(EndpointUrl),
  enabledEvents: v.optional(EnabledEvents),
  description: v.optional(v.nullable(EndpointDescription)),
  status: v.optional(v.picklist(ENDPOINT_STATUSES, `must be ${ENDPOINT_STATUSES.join(' or ')}`)),
});

/** `POST /v1/webhook_endpoints/{id}/recover`: resend what failed since then. */
export const RecoverWebhookEndpointBody = strict({ since: Instant });

/** `POST /v1/webhook_endpoints/{id}/rotate_secret` takes no field: no body, or `{}`. */
export const RotateWebhookEndpointSecretBody = v.optional(strict({}));

const LocalDate = v.pipe(
  v.string('must be a string'),
  described(v.check(isLocalDate, 'must be a date YYYY-MM-DD'), { format: 'date' }),
);

/** `GET …/source_stores/{id}/scorecard` (CONTRACT.md §16.3): a window of days in the supplier's zone. */
export const ScorecardQuery = strict({ from: v.optional(LocalDate), to: v.optional(LocalDate) });
