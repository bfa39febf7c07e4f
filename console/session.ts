import { type ApiClient, createApiClient } from '../client/client.js';

/**
 * The API key the operator pasted: in `sessionStorage` only (gone with the tab; never in
 * `localStorage`, a URL or a log line), sent as the bearer key of every call of the typed client,
 * to the API of the page's own origin.
 */

const KEY = 'reseller-routing.apiKey';

export const apiKey = () => sessionStorage.getItem(KEY);
export const setApiKey = (key: string) => sessionStorage.setItem(KEY, key);
export const forgetApiKey = () => sessionStorage.removeItem(KEY);

export const api = (): ApiClient => createApiClient({ baseUrl: location.origin, apiKey: apiKey() ?? undefined });

/** A key per click of an action button: a double click, or a resend after a lost answer, acts once. */
export const clickKey = (action: string) => `console-${action}-${crypto.randomUUID()}`;
