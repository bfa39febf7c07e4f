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
