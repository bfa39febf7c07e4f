import { data as currencyCodes, publishDate } from 'currency-codes';
import { ISO_4217_EXPONENTS, MAX_EXPONENT, NO_MINOR_UNIT } from '../../shared/domain/money.js';

/**
 * shared/domain/money.ts is written from ISO 4217 itself; the `currency-codes` package
 * (a dev dependency: it never reaches a bundle) carries the same list one, and is the check.
 */
describe('ISO 4217 exponent table', () => {
  /** Codes of an amendment newer than the package's data (2024-06-25): XCG, amendment 176 (2025). */
  const NEWER_THAN_PACKAGE = ['XCG'];

  it('is checked against the package of the edition it was written from', () => {
    expect(publishDate).toBe('2024-06-25');
  });

  it('gives every code with minor units the exponent ISO 4217 gives it', () => {
    const mismatches = currencyCodes
      .filter((entry) => !NO_MINOR_UNIT.has(entry.code))
      .filter((entry) => ISO_4217_EXPONENTS.get(entry.code) !== entry.digits)
      .map((entry) => `${entry.code}: table ${ISO_4217_EXPONENTS.get(entry.code)}, ISO ${entry.digits}`);
    expect(mismatches).toEqual([]);
  });

  it('lists no code the standard does not, but for newer amendments', () => {
    const known = new Set(currencyCodes.map((entry) => entry.code));
    expect([...ISO_4217_EXPONENTS.keys()].filter((code) => !known.has(code))).toEqual(NEWER_THAN_PACKAGE);
  });

  it('keeps the "N.A." codes (no minor unit) out of the priced table', () => {
    // The package writes ISO's "N.A." as 0 digits; pricing in them would round to whole units.
    for (const code of NO_MINOR_UNIT) {
      expect(ISO_4217_EXPONENTS.has(code)).toBe(false);
      expect(currencyCodes.find((entry) => entry.code === code)?.digits).toBe(0);
    }
    expect(currencyCodes.length).toBe(ISO_4217_EXPONENTS.size - NEWER_THAN_PACKAGE.length + NO_MINOR_UNIT.size);
  });

  it('differs from Intl (CLDR) where the issue saw wrong prices', () => {
    const intl = (code: string) =>
      new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;
    for (const [code, iso] of [
      ['HUF', 2],
      ['IQD', 3],
    ] as const) {
      expect(ISO_4217_EXPONENTS.get(code)).toBe(iso);
      expect(intl(code)).not.toBe(iso);
    }
  });

  it('has 4 as its largest exponent (CLF, UYW): the decimal places of a markup', () => {
    expect(MAX_EXPONENT).toBe(4);
  });
});
