/**
 * Minor-unit exponents of ISO 4217 (list one, "Current currency & funds code list", as published
 * 2024-06-25, plus amendment 176 of 2025: XCG). Written from the standard, not from `Intl`:
 * `Intl` follows CLDR, which rounds HUF, IDR, PKR and COP to 0 decimals (ISO: 2) and IQD to 0
 * (ISO: 3). test/unit/currencies.test.ts checks this table against the `currency-codes` package.
 *
 * Grouped by exponent; each string holds the codes of one group, space separated.
 */
const BY_EXPONENT: Record<number, string> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF',
  2:
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD ' +
    'CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL ' +
    'GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD ' +
    'LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN ' +
    'PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB ' +
    'TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG',
  3: 'BHD IQD JOD KWD LYD OMR TND',
  4: 'CLF UYW',
};

/**
 * Codes ISO 4217 lists with "N.A." minor units (precious metals, bond-market units, SDR, testing,
 * "no currency"): an amount in them has no defined decimal places, so no price is computed in them.
 */
export const NO_MINOR_UNIT = new Set('XAG XAU XBA XBB XBC XBD XDR XPD XPT XSU XTS XUA XXX'.split(' '));

export const ISO_4217_EXPONENTS: ReadonlyMap<string, number> = new Map(
  Object.entries(BY_EXPONENT).flatMap(([exponent, codes]) =>
    codes.split(' ').map((code) => [code, Number(exponent)] as const),
  ),
);

/** The largest exponent of the table: the decimal places a configured markup may have. */
export const MAX_EXPONENT = Math.max(...ISO_4217_EXPONENTS.values());

/**
 * Money as the platform sends it: non-negative decimal strings ("13.00", "13", "0.5"),
 * computed in integer minor units of the currency's own exponent. No floating point
 * touches an amount; numbers from configuration are converted through their decimal form.
 */

/** A malformed amount (negative, NaN, exponent notation, not a decimal at all). */
export class InvalidAmountError extends Error {
  readonly code = 'validation_failed' as const;
  override readonly name = 'InvalidAmountError';
  readonly param: string | undefined;

  constructor(message: string, param?: string) {
    super(message);
    this.param = param;
  }
}

/** An exact decimal: `units / 10^scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

/**
 * A currency whose prices the service cannot compute exactly: not in the ISO 4217 table, or one
 * the standard gives no minor unit. Rounding to a guessed exponent would change the price, so a
 * job in such a currency ends `dead` at once with this reason (it names the currency).
 */
export class UnknownCurrencyError extends Error {
  override readonly name = 'UnknownCurrencyError';
  constructor(readonly currency: string) {
    const code = quote(currency);
    super(
      NO_MINOR_UNIT.has(currency)
        ? `currency ${code} has no minor unit in ISO 4217, so its prices cannot be computed`
        : `currency ${code} is not an ISO 4217 currency this service knows; its prices were not re-rounded`,
    );
  }
}

/** Minor-unit exponent of an ISO 4217 currency (USD 2, JPY 0, HUF 2, IQD 3, CLF 4), from the ISO table. */
export function currencyExponent(currency: string): number {
  const exponent = ISO_4217_EXPONENTS.get(currency);
  if (exponent === undefined) throw new UnknownCurrencyError(currency);
  return exponent;
}

/** Decimal places a configured markup may have: the largest exponent of ISO 4217, so it is exact in every currency. */
export const PRICING_DECIMALS = MAX_EXPONENT;

/** The decimal places of a number as written in its shortest form (`5e-324` has 324, `0.1` has 1). */
export function decimalPlaces(value: number): number {
  return Number.isFinite(value) ? decimalFromNumber(Math.abs(value)).scale : Number.POSITIVE_INFINITY;
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

function quote(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Parses a non-negative decimal string exactly; rejects signs, exponents, blanks and anything else. */
export function parseDecimal(amount: string, param?: string): Decimal {
  const match = typeof amount === 'string' ? DECIMAL.exec(amount) : null;
  if (!match) throw new InvalidAmountError(`${quote(amount)} is not a valid amount`, param);
  const fraction = match[2] ?? '';
  return { units: BigInt(match[1] + fraction), scale: fraction.length };
}

/**
 * The exact decimal a JavaScript number stands for in its shortest round-trip form
 * (2.675 is "2.675", not 2.67499…), so configured costs and percentages are taken as written.
 */
export function decimalFromNumber(value: number, param?: string): Decimal {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidAmountError(`${quote(value)} is not a valid amount`, param);
  }
  const text = String(value);
  const exp = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exp) return parseDecimal(text, param);
  // Shortest round-trip strings switch to exponent notation below 1e-6 and from 1e21.
  const fraction = exp[2] ?? '';
  const shift = Number(exp[3]) - fraction.length;
  const digits = BigInt(exp[1] + fraction);
  return shift >= 0 ? { units: digits * 10n ** BigInt(shift), scale: 0 } : { units: digits, scale: -shift };
}

/** `numerator / denominator` rounded half away from zero; the denominator must be positive. */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  let quotient = magnitude / denominator;
  if ((magnitude % denominator) * 2n >= denominator) quotient += 1n;
  return negative ? -quotient : quotient;
}

/** Expresses a decimal at `scale` decimals, rounding half away from zero when it has more. */
export function rescale(decimal: Decimal, scale: number): bigint {
  if (decimal.scale <= scale) return decimal.units * 10n ** BigInt(scale - decimal.scale);
  return divideRounded(decimal.units, 10n ** BigInt(decimal.scale - scale));
}

/** A decimal amount string to minor units of an exponent, rounded half away from zero. */
export function toMinorUnits(amount: string, exponent: number, param?: string): bigint {
  return rescale(parseDecimal(amount, param), exponent);
}

/** Minor units to a decimal string with exactly `exponent` decimals; negative amounts become zero. */
export function formatMinorUnits(minor: bigint, exponent: number): string {
  const value = minor < 0n ? 0n : minor;
  if (exponent === 0) return value.toString();
  const digits = value.toString().padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

export type PricingConfig =
  | { type: 'percentage'; value: number }
  | { type: 'field_rules'; productCost: number; shippingCost: number };

/** The supplier's unit price for a reseller unit price, in the currency's exponent. */
export function supplierUnitPrice(resellerPrice: string, currency: string, config: PricingConfig): string {
  const exponent = currencyExponent(currency);
  const price = parseDecimal(resellerPrice, 'price');
  if (config.type === 'percentage') {
    return formatMinorUnits(
      withoutMarkup(price, decimalFromNumber(config.value, 'pricingConfig.value'), exponent),
      exponent,
    );
  }
  return minusCost(price, config.productCost, 'pricingConfig.productCost', exponent);
}

/** The supplier's price for one shipping line, in the currency's exponent. */
export function supplierShippingPrice(resellerPrice: string, currency: string, config: PricingConfig): string {
  const exponent = currencyExponent(currency);
  const price = parseDecimal(resellerPrice, 'price');
  if (config.type === 'percentage') return formatMinorUnits(rescale(price, exponent), exponent);
  return minusCost(price, config.shippingCost, 'pricingConfig.shippingCost', exponent);
}

/**
 * price × 100 / (100 + value) in minor units, as one exact fraction rounded once:
 * with price = P / 10^s and value = V / 10^k, minor = P·10^e·100·10^k / (10^s·(100·10^k + V)).
 */
function withoutMarkup(price: Decimal, value: Decimal, exponent: number): bigint {
  const valueScale = 10n ** BigInt(value.scale);
  const numerator = price.units * 10n ** BigInt(exponent) * 100n * valueScale;
  const denominator = 10n ** BigInt(price.scale) * (100n * valueScale + value.units);
  return divideRounded(numerator, denominator);
}

/** price − cost, with the cost first taken to minor units (half away from zero), floored at zero. */
function minusCost(price: Decimal, cost: number, param: string, exponent: number): string {
  const costMinor = rescale(decimalFromNumber(cost, param), exponent);
  // Subtracting at the price's own scale rounds the result once, whatever its number of decimals.
  const scale = Math.max(price.scale, exponent);
  const difference = rescale(price, scale) - costMinor * 10n ** BigInt(scale - exponent);
  if (difference <= 0n) return formatMinorUnits(0n, exponent);
  return formatMinorUnits(rescale({ units: difference, scale }, exponent), exponent);
}
