/**
 * The simulator's side of staying connected (PLATFORM-API.md, "Staying connected" and "The simulator"):
 * per shop its webhook subscriptions (REST and GraphQL alike), its tokens with their expiry and Token
 * refresh, and the API version it answers with; per order its `financial_status`, `risk_recommendation`
 * and `test` as a platform's order reads serve them. Kept beside each `SimShop` (a WeakMap), so a reset
 * that drops the shops drops this too.
 */
import { randomBytes } from 'node:crypto';
import type { Json, SimLedger, SimOrder, SimShop } from './simulator-store.js';

export interface SimWebhook {
  id: number;
  /** REST spelling (`orders/create`), whichever platform's call made it. */
  topic: string;
  address: string;
  format: 'json';
  created_at: string;
}

interface SimTokens {
  clientId: string;
  clientSecret: string;
  /** Lifetime of every access token the shop issues, ms. */
  lifetimeMs: number;
  /** access token → when it expires (ms). */
  access: Map<string, number>;
  /** refresh token → the refresh token it replaced (null for the first), and whether it is spent. */
  refresh: Map<string, { parent: string | null; spent: boolean; used?: boolean }>;
  refreshes: number;
  /** Refreshes with a refresh token already used once: two refreshes of one token's expiry. */
  reused: number;
}

interface ConnectState {
  webhooks: Map<number, SimWebhook>;
  tokens: SimTokens | null;
  /** After `POST /_sim/shops/{domain}/revoke`: every refresh token refused. */
  revoked: boolean;
  /** `POST /_sim/shops/{domain}/api`: the version answered instead of the one asked, a deprecation reason. */
  servedVersion: string | null;
  deprecatedReason: string | null;
}

export interface SimAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const answer = (status: number, body: unknown): SimAnswer => ({ status, body });
const states = new WeakMap<SimShop, ConnectState>();
const webhookIds = new WeakMap<SimLedger, number>();

export function connectOf(shop: SimShop): ConnectState {
  let state = states.get(shop);
  if (!state) {
    state = { webhooks: new Map(), tokens: null, revoked: false, servedVersion: null, deprecatedReason: null };
    states.set(shop, state);
  }
  return state;
}

const asObject = (v: unknown): Json | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;

// ---------------------------------------------------------------- an order's payment, risk and test

export const FINANCIAL_STATUSES = [
  'pending',
  'authorized',
  'partially_paid',
  'paid',
  'partially_refunded',
  'refunded',
  'voided',
];
export const RISK_RECOMMENDATIONS = ['accept', 'investigate', 'cancel', 'none'];

/** What a platform's order read answers of payment, risk and test: the order's, or the defaults. */
export const orderFacts = (order: SimOrder) => ({
  financial_status: typeof order.financial_status === 'string' ? order.financial_status : 'paid',
  risk_recommendation: typeof order.risk_recommendation === 'string' ? order.risk_recommendation : 'none',
  test: order.test === true,
});

/** An order given to `POST /_sim/orders` with its facts: those it gives, else the defaults. */
export const withOrderFacts = (order: Json): Json => ({ ...order, ...orderFacts(order as SimOrder) });

/** The reason a shop change (`PATCH /_sim/orders/{id}`) is refused, or null when it is fine. */
export function shopChangeError(changes: Json): string | null {
  if ('financial_status' in changes && !FINANCIAL_STATUSES.includes(String(changes.financial_status))) {
    return `financial_status must be one of ${FINANCIAL_STATUSES.join(', ')}`;
  }
  if ('risk_recommendation' in changes && !RISK_RECOMMENDATIONS.includes(String(changes.risk_recommendation))) {
    return `risk_recommendation must be one of ${RISK_RECOMMENDATIONS.join(', ')}`;
  }
  if ('test' in changes && typeof changes.test !== 'boolean') return 'test must be true or false';
  if ('email' in changes && changes.email !== null && typeof changes.email !== 'string')
    return 'email must be a string';
  if ('shipping_address' in changes && changes.shipping_address !== null && !asObject(changes.shipping_address)) {
    return 'shipping_address must be an object';
  }
  return null;
}

// ---------------------------------------------------------------- webhook subscriptions

/** An address a platform can deliver to: http(s), and not a host reserved to never resolve (`.invalid`). */
const unreachable = (address: string): string | null => {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  return url.hostname.endsWith('.invalid') ? 'cannot be reached' : null;
};

/**
 * Subscribes an address to a topic; the refusal (`field`, `message`) when the address cannot be reached or
 * is already subscribed to that topic, as Shopify refuses both.
 */
export function subscribe(
  shop: SimShop,
  topic: unknown,
  address: unknown,
): { webhook: SimWebhook } | { field: string; message: string } {
  if (typeof topic !== 'string' || topic === '') return { field: 'topic', message: "can't be blank" };
  if (typeof address !== 'string') return { field: 'address', message: "can't be blank" };
  const problem = unreachable(address);
  if (problem) return { field: 'address', message: problem };
  const { webhooks } = connectOf(shop);
  if ([...webhooks.values()].some((w) => w.topic === topic && w.address === address)) {
    return { field: 'address', message: 'for this topic has already been taken' };
  }
  const id = webhookIds.get(shop.ledger) ?? 4_001;
  webhookIds.set(shop.ledger, id + 1);
  const webhook: SimWebhook = { id, topic, address, format: 'json', created_at: new Date().toISOString() };
  webhooks.set(id, webhook);
  return { webhook };
}

export const webhooksOf = (shop: SimShop): SimWebhook[] => [...connectOf(shop).webhooks.values()];

/** The platform drops a subscription (`DELETE /_sim/webhooks/{id}`), whichever shop has it. */
export function dropWebhook(shops: Iterable<SimShop>, id: number): boolean {
  for (const shop of shops) {
    if (connectOf(shop).webhooks.delete(id)) return true;
  }
  return false;
}

// ---------------------------------------------------------------- tokens

const newToken = (prefix: string) => `${prefix}_sim_${randomBytes(16).toString('hex')}`;

/**
 * `POST /_sim/shops/{domain}/tokens` `{accessToken, expiresInSeconds, refreshToken, clientId, clientSecret}`:
 * from then on the shop refuses the access token once expired and serves Token refresh for the refresh token.
 */
export function issueTokens(shop: SimShop, body: unknown, now = Date.now()): SimAnswer {
  const request = asObject(body) ?? {};
  const { accessToken, expiresInSeconds, refreshToken, clientId, clientSecret } = request;
  const texts = [accessToken, refreshToken, clientId, clientSecret];
  if (!texts.every((t) => typeof t === 'string' && t !== '')) {
    return answer(400, { errors: 'accessToken, refreshToken, clientId and clientSecret are required' });
  }
  if (typeof expiresInSeconds !== 'number' || !(expiresInSeconds > 0)) {
    return answer(400, { errors: 'expiresInSeconds must be a positive number' });
  }
  const state = connectOf(shop);
  const tokens: SimTokens = state.tokens ?? {
    clientId: clientId as string,
    clientSecret: clientSecret as string,
    lifetimeMs: expiresInSeconds * 1000,
    access: new Map(),
    refresh: new Map(),
    refreshes: 0,
    reused: 0,
  };
  Object.assign(tokens, { clientId, clientSecret, lifetimeMs: expiresInSeconds * 1000 });
  tokens.access.set(accessToken as string, now + expiresInSeconds * 1000);
  tokens.refresh.set(refreshToken as string, { parent: null, spent: false });
  state.tokens = tokens;
  state.revoked = false;
  return answer(201, tokensView(shop, now));
}

/**
 * What a test reads of a shop's tokens: how many refreshes it served, how many of them with a refresh token
 * used before (one expiry refreshed twice), and none of the tokens themselves.
 */
export function tokensView(shop: SimShop, now = Date.now()) {
  const state = connectOf(shop);
  const live = state.tokens ? [...state.tokens.access.values()].filter((expiry) => expiry > now).length : 0;
  return {
    refreshes: state.tokens?.refreshes ?? 0,
    reusedRefreshTokens: state.tokens?.reused ?? 0,
    liveAccessTokens: live,
    revoked: state.revoked,
  };
}

/** An access token the shop issued and that has expired: refused with 401. A token it never issued passes. */
export function isExpired(shop: SimShop, accessToken: string | null, now = Date.now()): boolean {
  const expiry = accessToken === null ? undefined : connectOf(shop).tokens?.access.get(accessToken);
  return expiry !== undefined && expiry <= now;
}

const INVALID_GRANT = answer(400, {
  error: 'invalid_grant',
  error_description: 'The refresh token is invalid, expired or revoked',
});

/**
 * `POST /admin/oauth/access_token` (PLATFORM-API.md, "Token refresh"): a new access token and the next
 * refresh token. The refresh token sent stays good until its successor is used, then it is refused
 * (`invalid_grant`), as is every refresh token of a revoked shop.
 */
export function refreshToken(shop: SimShop, body: unknown, now = Date.now()): SimAnswer {
  const request = asObject(body) ?? {};
  const state = connectOf(shop);
  const tokens = state.tokens;
  if (request.grant_type !== 'refresh_token') return answer(400, { error: 'unsupported_grant_type' });
  if (!tokens || state.revoked) return INVALID_GRANT;
  if (request.client_id !== tokens.clientId || request.client_secret !== tokens.clientSecret) {
    return answer(401, { error: 'invalid_client' });
  }
  const presented = typeof request.refresh_token === 'string' ? request.refresh_token : '';
  const entry = tokens.refresh.get(presented);
  if (!entry || entry.spent) return INVALID_GRANT;
  // Using a successor spends the token it replaced: the rotation is complete.
  const parent = entry.parent === null ? undefined : tokens.refresh.get(entry.parent);
  if (parent) parent.spent = true;
  if (entry.used) tokens.reused += 1;
  entry.used = true;
  const accessToken = newToken('shpat');
  const next = newToken('shprt');
  tokens.access.set(accessToken, now + tokens.lifetimeMs);
  tokens.refresh.set(next, { parent: presented, spent: false });
  tokens.refreshes += 1;
  return answer(200, {
    access_token: accessToken,
    // Shopify's lifetimes are whole seconds; a test's sub-second token keeps its own.
    expires_in: tokens.lifetimeMs / 1000,
    refresh_token: next,
    refresh_token_expires_in: 7_776_000,
    scope: 'read_orders,write_orders',
  });
}

export function revoke(shop: SimShop): SimAnswer {
  connectOf(shop).revoked = true;
  return answer(200, { ok: true });
}

// ---------------------------------------------------------------- API version

const VERSIONED = /^\/admin\/api\/([^/]+)\//;

/**
 * `X-Shopify-API-Version` on every versioned answer (the version asked for, or the one a test made the
 * shop serve), and `X-Shopify-API-Deprecated-Reason` once a test asked for it.
 */
export function apiVersionHeaders(shop: SimShop | undefined, path: string): Record<string, string> {
  const asked = VERSIONED.exec(path)?.[1];
  if (asked === undefined) return {};
  const state = shop ? connectOf(shop) : undefined;
  const headers: Record<string, string> = { 'X-Shopify-API-Version': state?.servedVersion ?? asked };
  if (state?.deprecatedReason) headers['X-Shopify-API-Deprecated-Reason'] = state.deprecatedReason;
  return headers;
}

/** `POST /_sim/shops/{domain}/api` `{servedVersion?, deprecatedReason?}` (null clears either). */
export function setApiVersion(shop: SimShop, body: unknown): SimAnswer {
  const request = asObject(body) ?? {};
  const state = connectOf(shop);
  for (const field of ['servedVersion', 'deprecatedReason'] as const) {
    if (!(field in request)) continue;
    const value = request[field];
    if (value !== null && typeof value !== 'string')
      return answer(400, { errors: `${field} must be a string or null` });
    state[field] = value;
  }
  return answer(200, { servedVersion: state.servedVersion, deprecatedReason: state.deprecatedReason });
}
