import { describe, expect, it } from 'vitest';
import type { EmployeeOfRecord } from '../../../src/collections/mandates/mandate-person.ts';
import { consumerIdentityViolation } from '../../../src/collections/mandates/consumer-identity.ts';

const employee: EmployeeOfRecord = { national_registration_number: 'QQ123456C', date_of_birth: '1985-04-12', family_names: ["O'Brien-Núñez"] };
const consumer = { family_name: 'obrien nunez', date_of_birth: '1985-04-12', national_registration_number: null };

describe('consumerIdentityViolation', () => {
  it('accepts the employee as availability would match them', () => {
    expect(consumerIdentityViolation(consumer, employee)).toBeNull();
    expect(consumerIdentityViolation({ ...consumer, family_name: "O'BRIEN-NUNEZ" }, employee)).toBeNull();
    expect(consumerIdentityViolation({ ...consumer, national_registration_number: 'qq 12 34 56 c' }, employee)).toBeNull();
  });

  it("accepts a family name any of the employee's payrolls gives, and no other", () => {
    const twoPayrolls: EmployeeOfRecord = { ...employee, family_names: ["O'Donnell", 'Shah-Patel'] };
    expect(consumerIdentityViolation({ ...consumer, family_name: 'ODONNELL' }, twoPayrolls)).toBeNull();
    expect(consumerIdentityViolation({ ...consumer, family_name: 'shah patel' }, twoPayrolls)).toBeNull();
    expect(consumerIdentityViolation({ ...consumer, family_name: 'Shah' }, twoPayrolls)?.slug).toBe('consumer-not-employee');
    expect(consumerIdentityViolation(consumer, { ...employee, family_names: [] })?.slug).toBe('consumer-not-employee');
  });

  it('refuses another family name, date of birth or number, the same way whichever differs', () => {
    const wrongName = consumerIdentityViolation({ ...consumer, family_name: 'Murphy' }, employee);
    const wrongBirth = consumerIdentityViolation({ ...consumer, date_of_birth: '1985-04-13' }, employee);
    expect(wrongName?.slug).toBe('consumer-not-employee');
    expect(wrongBirth).toEqual(wrongName);
    expect(wrongName!.errors.map((error) => error.pointer)).toEqual(['/mandate_record/consumer/family_name', '/mandate_record/consumer/date_of_birth']);
    const wrongNumber = consumerIdentityViolation({ ...consumer, national_registration_number: 'QQ123457C' }, employee);
    expect(wrongNumber!.errors.map((error) => error.pointer)).toEqual([
      '/mandate_record/consumer/family_name',
      '/mandate_record/consumer/date_of_birth',
      '/mandate_record/consumer/national_registration_number',
    ]);
  });

  it('refuses what cannot be judged: no date of birth, a name of no letters, or an employee the directory knows too little of', () => {
    expect(consumerIdentityViolation({ ...consumer, date_of_birth: null }, employee)).toEqual({
      slug: 'consumer-identity-incomplete',
      summary: expect.any(String),
      errors: [{ pointer: '/mandate_record/consumer/date_of_birth', detail: expect.any(String) }],
    });
    expect(consumerIdentityViolation({ ...consumer, family_name: ' - ' }, employee)?.slug).toBe('consumer-identity-incomplete');
    expect(consumerIdentityViolation(consumer, { ...employee, date_of_birth: null })?.slug).toBe('consumer-not-employee');
    expect(consumerIdentityViolation(consumer, { ...employee, national_registration_number: null })?.slug).toBe('consumer-not-employee');
  });
});
