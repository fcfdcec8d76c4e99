import { describe, expect, it } from 'vitest';
import { neutraliseFormula } from '../../../src/platform/shared/csv-cells.ts';

describe('neutraliseFormula', () => {
  it.each(['=', '+', '-', '@', '\t', '\r'])('prefixes text starting with %j', (start) => {
    expect(neutraliseFormula(`${start}HYPERLINK("http://x")`)).toBe(`'${start}HYPERLINK("http://x")`);
    expect(neutraliseFormula(start)).toBe(`'${start}`);
  });

  it('leaves every other first character alone, formula characters later in the text included', () => {
    for (let code = 0; code < 0x250; code++) {
      const start = String.fromCharCode(code);
      if ('=+-@\t\r'.includes(start)) continue;
      expect(neutraliseFormula(`${start}=1+2`)).toBe(`${start}=1+2`);
    }
    expect(neutraliseFormula('')).toBe('');
    expect(neutraliseFormula("O'Brien & Sons, Ltd")).toBe("O'Brien & Sons, Ltd");
  });

  it('is applied once: a neutralised cell stays as it is', () => {
    expect(neutraliseFormula(neutraliseFormula('=1+2'))).toBe("'=1+2");
  });
});
