import { createHash } from 'node:crypto';
import { create } from 'xmlbuilder2';
import { currencyExponent } from '../money/currency.ts';
import { formatMinorUnits } from '../money/major-units.ts';
import { InvalidError } from '../shared/domain-errors.ts';
import type { UkBankAccount } from './bank-account-details.ts';
import type { PayoutFileRow } from './payout-file.ts';

export const PAIN001_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.001.001.09';

/** Banks' pain.001 guidelines (EPC, UK clearing) cap names at 70 characters though the schema allows 140. */
export const PAIN001_NAME_MAX_LENGTH = 70;
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
  payoutDate: string;
  /** When the file is generated: the group header's CreDtTm, the only part that changes between generations. */
  createdAt: Date;
  /** The payouts made on the date, as the CSV bank file lists them. */
  payouts: readonly PayoutFileRow[];
  /** One per currency of the payouts. */
  debtorAccounts: readonly Pain001DebtorAccount[];
}

// The character set UK and EPC banks accept in pain.001 text (the "SWIFT Latin" subset): anything else
// risks the whole file being rejected, so it is transliterated or replaced before it reaches the file.
const DISALLOWED = /[^A-Za-z0-9/\-?:().,'+ ]/g;
const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  '&': '+',
  '‘': "'",
  '’': "'",
  '‚': "'",
  '`': "'",
  '´': "'",
  '–': '-',
  '—': '-',
  '‐': '-',
  '‑': '-',
};

/**
 * Text as a bank accepts it in a pain.001 file: accents dropped (é -> e), a few letters and marks spelt
 * out (ß -> ss, & -> +), any other character outside the set a space, spaces collapsed, and cut to
 * `maxLength`. May return '' when nothing of the text is representable; the caller decides what that means.
 */
export function isoLatinText(text: string, maxLength: number): string {
  const spelt = [...text.normalize('NFKD').replace(/\p{M}/gu, '')].map((character) => TRANSLITERATIONS[character] ?? character).join('');
  return spelt.replace(DISALLOWED, ' ').replace(/ +/g, ' ').trim().slice(0, maxLength).trimEnd();
}

/**
 * The file's MsgId: 'SDPO', the payout date as YYMMDD and eight hex digits of a hash of the payout ids,
 * so generating the same date's file again gives the same id (a bank refuses a MsgId it has seen as a
 * duplicate upload), and a date whose payouts changed gets a new one.
 */
export function pain001MessageId(payoutDate: string, payoutIds: readonly string[]): string {
  const yymmdd = payoutDate.slice(2).replaceAll('-', '');
  const hash = createHash('sha256').update([...payoutIds].sort().join(',')).digest('hex');
  return `SDPO${yymmdd}${hash.slice(0, 8).toUpperCase()}`;
}

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

function bankName(text: string, what: string): string {
  const name = isoLatinText(text, PAIN001_NAME_MAX_LENGTH);
  if (name === '') {
    throw new InvalidError('name-not-representable', `${what}: the name "${text}" has no character a bank accepts in a pain.001 file`);
  }
  return name;
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
 * The ISO 20022 credit transfer initiation (pain.001.001.09) of a date's payouts: one payment
 * information block per currency, paid from that currency's collection account on the payout date,
 * with one transfer per payout whose references are the payout's, so the bank statement line leads
 * back to it. Amounts are exact decimal strings; text is reduced to the characters banks accept.
 */
export function renderPain001File(request: Pain001Request): string {
  if (request.payouts.length === 0) throw new RangeError('A pain.001 file holds at least one transfer');
  const messageId = pain001MessageId(request.payoutDate, request.payouts.map((payout) => payout.id));
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
      ReqdExctnDt: { Dt: request.payoutDate },
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

export function pain001FileName(payoutDate: string): string {
  return `payouts-${payoutDate}.pain.001.xml`;
}
