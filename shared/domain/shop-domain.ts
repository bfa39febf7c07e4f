const LABEL = /^[a-z0-9][a-z0-9-]*$/;

/**
 * `<label>.<suffix>`, lower-cased: the only form a store's shop domain can be registered under
 * (shared/http/schemas.ts), and so the only one a webhook delivery may name (shared/stores/verify.ts).
 */
export const isShopDomainUnder = (value: string, suffix: string) => {
  const dotted = `.${suffix.toLowerCase()}`;
  if (!value.endsWith(dotted)) return false;
  const label = value.slice(0, -dotted.length);
  return label.length <= 63 && LABEL.test(label);
};
