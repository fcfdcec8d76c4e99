import { create } from 'xmlbuilder2';
import { currencyExponent } from '../../platform/money/currency.ts';
import { formatMinorUnits } from '../../platform/money/major-units.ts';
import type { UkBankAccount } from './bank-account-details.ts';
import type { PayoutFileRow } from './payment-file-repository.ts';
import { pain001Name, swiftLatinText as isoLatinText } from './payment-text.ts';

export const PAIN001_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.001.001.09';

/** Banks' pain.001 guidelines (EPC, UK clearing) cap names at 70 characters though the schema allows 140. */
export { PAIN001_NAME_MAX_LENGTH } from './payment-text.ts';
/** Max140Text: the unstructured remittance information. */
const REMITTANCE_MAX_LENGTH = 140;
/** Max35Text: identifiers and references. */
const IDENTIFIER_MAX_LENGTH = 35;

/** Non-urgent clearing (Bacs or Faster Payments at the bank's choice), as payouts need no same-hour settlement. */
const SERVICE_LEVEL = 'NURG';
/** UK Domestic Sort Code: the clearing system a sort code is a member id of. */
const UK_SORT_CODE_CLEARING_SYSTEM = 'GBDSC';

/** The account the file pays from: the active collection account of the payouts' currency. */
export interface Pain001DebtorAccount extends UkBankAccount {
  currency: string;
}

export interface Pain001Request {
  /** GrpHdr/MsgId: the payment file's own (paymentFileMessageId), never reused for other payouts. */
  messageId: string;
  /** GrpHdr/CreDtTm: when the payment file was written (to the second). */
  createdAt: Date;
  /** ReqdExctnDt of every block: a bank business day (payoutExecutionDate of the payout date). */
  requestedExecutionDate: string;
  /** The payouts the file instructs, as the CSV rendering of the same file lists them. */
  payouts: readonly PayoutFileRow[];
  /** One per currency of the payouts. */
  debtorAccounts: readonly Pain001DebtorAccount[];
}

// Text reaches the file in the character set UK and EPC banks accept in pain.001 (the "SWIFT Latin"
// subset), by the rules of payment-text.ts, which the account setup checks names against as well.
// isoLatinText stays exported under its old name for code that imports it from here.
export { isoLatinText };

/**
 * The sum of amounts as a decimal string, exactly: each is brought to the largest exponent among their
 * currencies in integer minor units (bigint, so no total can lose a digit), then the point is placed.
 * One currency gives exactly its decimals (GBP "123.45"); a group header over GBP and JPY gives two.
 */
export function controlSum(amounts: ReadonlyArray<{ amount: number; currency: string }>): string {
  const exponent = Math.max(0, ...amounts.map((entry) => currencyExponent(entry.currency)));
  let total = 0n;
  for (const entry of amounts) {
    if (!Number.isSafeInteger(entry.amount)) throw new RangeError(`Minor units must be a safe integer, got ${String(entry.amount)}`);
    total += BigInt(entry.amount) * 10n ** BigInt(exponent - currencyExponent(entry.currency));
  }
  const negative = total < 0n;
  const digits = String(negative ? -total : total).padStart(exponent + 1, '0');
  const cut = digits.length - exponent;
  return `${negative ? '-' : ''}${digits.slice(0, cut)}${exponent === 0 ? '' : `.${digits.slice(cut)}`}`;
}

/**
 * The most digits an amount or a control sum may have (ActiveOrHistoricCurrencyAndAmount and
 * DecimalNumber: totalDigits 18).
 */
export const PAIN001_MAX_TOTAL_DIGITS = 18;

/** How many digits a total of `minor` units with `exponent` decimals has as controlSum writes it, but for leading zeros. */
function writtenDigits(minor: bigint, exponent: number): number {
  const digits = String(minor < 0n ? -minor : minor).length;
  return Math.max(digits, exponent, 1);
}

/**
 * Whether a pain.001 message with these totals (minor units per currency) is valid: every control sum
 * it carries (each currency's block and the group header's, over all currencies at the largest
 * exponent, as controlSum writes them) fits in 18 digits. Trailing zeros of a fraction count, as a
 * validator that reads the written form counts them. Payouts that do not fit in one message are spread
 * over several files (paymentFileBatches).
 */
export function pain001TotalsFit(totals: ReadonlyMap<string, bigint>): boolean {
  const exponent = Math.max(0, ...[...totals.keys()].map(currencyExponent));
  let group = 0n;
  for (const [currency, total] of totals) {
    if (writtenDigits(total, currencyExponent(currency)) > PAIN001_MAX_TOTAL_DIGITS) return false;
    group += total * 10n ** BigInt(exponent - currencyExponent(currency));
  }
  return writtenDigits(group, exponent) <= PAIN001_MAX_TOTAL_DIGITS;
}

/** pain001TotalsFit of the payouts' totals. */
export function fitsOnePain001(payouts: ReadonlyArray<{ amount: number; currency: string }>): boolean {
  const totals = new Map<string, bigint>();
  for (const payout of payouts) {
    if (!Number.isSafeInteger(payout.amount)) throw new RangeError(`Minor units must be a safe integer, got ${String(payout.amount)}`);
    totals.set(payout.currency, (totals.get(payout.currency) ?? 0n) + BigInt(payout.amount));
  }
  return pain001TotalsFit(totals);
}

/** A sort code as a clearing member id and the start of a BBAN: its six digits. */
function sortCodeDigits(sortCode: string): string {
  return sortCode.replaceAll('-', '');
}

/** The UK BBAN as banks read it in pain.001: the sort code's six digits then the eight-digit account number. */
export function ukBban(account: Pick<UkBankAccount, 'sort_code' | 'account_number'>): string {
  return `${sortCodeDigits(account.sort_code)}${account.account_number}`;
}

/** ISODateTime to the second, in UTC: the moment, not the service's wall clock, so it never depends on where it ran. */
function isoDateTime(instant: Date): string {
  return `${instant.toISOString().slice(0, 19)}Z`;
}

/**
 * A party's name as the file writes it (pain001Name): it never throws, so an account stored with a name
 * no file can carry does not hold back the file that pays everyone else; `what` names the party for
 * callers that report such names.
 */
function bankName(text: string, _what: string): string {
  return pain001Name(text);
}

function account(details: UkBankAccount, currency?: string) {
  return {
    Id: { Othr: { Id: ukBban(details), SchmeNm: { Cd: 'BBAN' } } },
    ...(currency ? { Ccy: currency } : {}),
  };
}

function agent(sortCode: string) {
  return { FinInstnId: { ClrSysMmbId: { ClrSysId: { Cd: UK_SORT_CODE_CLEARING_SYSTEM }, MmbId: sortCodeDigits(sortCode) } } };
}

function creditTransfer(payout: PayoutFileRow) {
  if (payout.amount <= 0) throw new RangeError(`Payout ${payout.reference}: a transfer needs a positive amount, got ${payout.amount}`);
  const reference = payout.reference.slice(0, IDENTIFIER_MAX_LENGTH);
  return {
    PmtId: { InstrId: reference, EndToEndId: reference },
    Amt: { InstdAmt: { '@Ccy': payout.currency, '#': formatMinorUnits(payout.amount, payout.currency) } },
    CdtrAgt: agent(payout.sort_code),
    Cdtr: { Nm: bankName(payout.account_holder_name, `Payout ${payout.reference}`) },
    CdtrAcct: account(payout),
    RmtInf: { Ustrd: isoLatinText(payout.reference, REMITTANCE_MAX_LENGTH) },
  };
}

/**
 * The ISO 20022 credit transfer initiation (pain.001.001.09) of a payment file: one payment
 * information block per currency, paid from that currency's collection account on the requested
 * execution date, with one transfer per payout whose InstrId and EndToEndId are the payout's own
 * reference (unique to the payout: a failed payout's money is paid again by a new payout, under a new
 * reference), so the bank statement line leads back to it. Amounts are exact decimal strings; text is
 * reduced to the characters banks accept. Rendered once, when the file is written: the bytes are stored.
 */
export function renderPain001File(request: Pain001Request): string {
  if (request.payouts.length === 0) throw new RangeError('A pain.001 file holds at least one transfer');
  if (new Set(request.payouts.map((payout) => payout.id)).size !== request.payouts.length) {
    throw new RangeError('A pain.001 file instructs each payout once');
  }
  if (!fitsOnePain001(request.payouts)) throw new RangeError(`A control sum of the file would exceed ${PAIN001_MAX_TOTAL_DIGITS} digits`);
  const { messageId } = request;
  const currencies = [...new Set(request.payouts.map((payout) => payout.currency))].sort();
  const debtors = currencies.map((currency) => {
    const debtor = request.debtorAccounts.find((candidate) => candidate.currency === currency);
    if (!debtor) throw new RangeError(`No debtor account for the ${currency} payouts`);
    return debtor;
  });

  const paymentInformation = debtors.map((debtor) => {
    const payouts = request.payouts.filter((payout) => payout.currency === debtor.currency);
    return {
      PmtInfId: `${messageId}-${debtor.currency}`,
      PmtMtd: 'TRF',
      // One debit per transfer: each payout is then its own line on the collection account's statement.
      BtchBookg: 'false',
      NbOfTxs: String(payouts.length),
      CtrlSum: controlSum(payouts),
      PmtTpInf: { SvcLvl: { Cd: SERVICE_LEVEL } },
      ReqdExctnDt: { Dt: request.requestedExecutionDate },
      Dbtr: { Nm: bankName(debtor.account_holder_name, `The ${debtor.currency} collection account`) },
      DbtrAcct: account(debtor, debtor.currency),
      DbtrAgt: agent(debtor.sort_code),
      CdtTrfTxInf: payouts.map(creditTransfer),
    };
  });

  const document = {
    Document: {
      '@xmlns': PAIN001_NAMESPACE,
      CstmrCdtTrfInitn: {
        GrpHdr: {
          MsgId: messageId,
          CreDtTm: isoDateTime(request.createdAt),
          NbOfTxs: String(request.payouts.length),
          CtrlSum: controlSum(request.payouts),
          InitgPty: { Nm: bankName(debtors[0]!.account_holder_name, `The ${debtors[0]!.currency} collection account`) },
        },
        PmtInf: paymentInformation,
      },
    },
  };
  return create({ version: '1.0', encoding: 'UTF-8' }, document).end({ prettyPrint: true }) + '\n';
}
