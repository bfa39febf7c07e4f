/**
 * Supplier prices from reseller prices (CONTRACT §7): the pricing config describes the
 * reseller's markup over the supplier's cost, and a sync removes it.
 */
import {
  currencyExponent,
  type Decimal,
  decimalFromNumber,
  divideRounded,
  formatMinorUnits,
  parseDecimal,
  rescale,
} from './money.js';

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
