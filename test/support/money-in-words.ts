import { currencyExponent, isSupportedCurrency } from '../../src/platform/money/currency.ts';
import { formatDecimalMoney } from '../../src/platform/money/money-text.ts';

const SYMBOL_CURRENCIES: Readonly<Record<string, string>> = { '£': 'GBP', '€': 'EUR', US$: 'USD' };

const hasItsDecimals = (digits: string, currency: string) => {
  const exponent = currencyExponent(currency);
  const fraction = /\.(\d+)$/.exec(digits)?.[1];
  return exponent === 0 ? fraction === undefined : fraction?.length === exponent;
};
const groupedRight = (digits: string) => /^\d{1,3}(?:,\d{3})*(?:\.\d+)?$/.test(digits);

/**
 * What is wrong with the money in a text a person reads (a command's output, a problem's detail):
 * "minor units", an amount without its currency's decimals, an amount not written the way
 * formatMoney writes it ("15200.00 GBP", "GBP 290.58" for £15,200.00 and £290.58). Empty when
 * every amount is in words. Counts and dates are left alone: an amount is a number beside a
 * currency symbol or a supported ISO 4217 code.
 */
export function moneyInWordsFaults(text: string): string[] {
  const faults: string[] = [];
  if (/minor units?\b/i.test(text)) faults.push('says "minor units"');
  for (const match of text.matchAll(/(£|€|US\$)(\d[\d,]*(?:\.\d+)?)/g)) {
    const [whole, symbol, digits] = match as unknown as [string, string, string];
    const currency = SYMBOL_CURRENCIES[symbol]!;
    if (!hasItsDecimals(digits, currency)) faults.push(`${whole} has no decimals, or not the currency’s`);
    else if (!groupedRight(digits)) faults.push(`${whole} is not how formatMoney writes ${currency} (${formatDecimalMoney(digits.replaceAll(',', ''), currency)})`);
  }
  for (const match of text.matchAll(/(?<![\w.,:£€$-])(\d[\d,]*(?:\.\d+)?) ([A-Z]{3})\b/g)) {
    const [whole, digits, currency] = match as unknown as [string, string, string];
    if (!isSupportedCurrency(currency)) continue;
    if (!hasItsDecimals(digits, currency)) faults.push(`${whole} has no decimals, or not the currency’s`);
    else if (Object.values(SYMBOL_CURRENCIES).includes(currency) || !groupedRight(digits)) {
      faults.push(`${whole} is not how formatMoney writes ${currency} (${formatDecimalMoney(digits.replaceAll(',', ''), currency)})`);
    }
  }
  for (const match of text.matchAll(/\b([A-Z]{3}) (\d[\d,]*(?:\.\d+)?)(?![\d-])/g)) {
    const [whole, currency, digits] = match as unknown as [string, string, string];
    if (!isSupportedCurrency(currency) || !hasItsDecimals(digits, currency)) continue;
    faults.push(`${whole} is not how formatMoney writes ${currency} (${formatDecimalMoney(digits.replaceAll(',', ''), currency)})`);
  }
  return faults;
}
