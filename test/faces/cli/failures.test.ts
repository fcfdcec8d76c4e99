import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../../src/faces/cli/failures.ts';
import { ConfigError } from '../../../src/platform/config/config.ts';
import { ConflictError } from '../../../src/platform/shared/domain-errors.ts';

const config = {
  DATABASE_URL: 'postgres://app:hunter2@db.internal:6432/deductions',
  REDIS_URL: 'redis://:hunter2@cache.internal',
  HOST: '0.0.0.0',
  PORT: 3000,
};

function errno(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

function databaseError(message: string, code: string): pg.DatabaseError {
  return Object.assign(new pg.DatabaseError(message, message.length, 'error'), { code, severity: 'FATAL' });
}

describe('describeFailure', () => {
  it('names the dependency a refused connection was to, by port, without credentials', () => {
    expect(describeFailure(errno('connect ECONNREFUSED 10.0.0.5:6432', { code: 'ECONNREFUSED', address: '10.0.0.5', port: 6432 }), config)).toEqual({
      message: 'Cannot reach PostgreSQL at db.internal:6432 (connection refused)',
      exitCode: 69,
    });
    expect(describeFailure(errno('connect ETIMEDOUT 10.0.0.6:6379', { code: 'ETIMEDOUT', address: '10.0.0.6', port: 6379 }), config).message).toBe(
      'Cannot reach Redis at cache.internal:6379 (timed out)',
    );
  });

  it('names it by host name when the name did not resolve, and looks inside AggregateError and causes', () => {
    const notFound = errno('getaddrinfo ENOTFOUND cache.internal', { code: 'ENOTFOUND', hostname: 'cache.internal' });
    expect(describeFailure(notFound, config).message).toBe('Cannot reach Redis at cache.internal:6379 (host not found)');
    const everyAddress = new AggregateError([errno('connect ECONNREFUSED ::1:6432', { code: 'ECONNREFUSED', address: '::1', port: 6432 })], 'boom');
    expect(describeFailure(everyAddress, config).message).toBe('Cannot reach PostgreSQL at db.internal:6432 (connection refused)');
    const wrapped = new Error('query failed', { cause: notFound });
    expect(describeFailure(wrapped, config).message).toBe('Cannot reach Redis at cache.internal:6379 (host not found)');
  });

  it('a port in use, a connection PostgreSQL refused, a statement it refused', () => {
    expect(describeFailure(errno('listen EADDRINUSE', { code: 'EADDRINUSE', address: '0.0.0.0', port: 3000 }), config)).toEqual({
      message: 'Port 3000 on 0.0.0.0 is already in use',
      exitCode: 69,
    });
    expect(describeFailure(databaseError('password authentication failed for user "app"', '28P01'), config)).toEqual({
      message: 'PostgreSQL at db.internal:6432 refused the connection: password authentication failed for user "app"',
      exitCode: 69,
    });
    expect(describeFailure(databaseError('invalid input syntax for type uuid: "nope"', '22P02'), config)).toEqual({
      message: 'PostgreSQL refused the statement: invalid input syntax for type uuid: "nope" (SQLSTATE 22P02)',
      exitCode: 1,
    });
  });

  it('domain refusals as they are, configuration with its own exit code, bugs by their kind, always one line', () => {
    expect(describeFailure(new ConfigError('Invalid configuration: PORT too big (got "99999")'), undefined)).toEqual({
      message: 'Invalid configuration: PORT too big (got "99999")',
      exitCode: 78,
    });
    expect(describeFailure(new ConflictError('payout-not-pending', 'payout P is paid, not pending'), config).message).toBe('payout P is paid, not pending');
    expect(describeFailure(new Error('payroll X pay date D has not been locked'), config).message).toBe('payroll X pay date D has not been locked');
    expect(describeFailure(new TypeError("Cannot read properties of undefined (reading 'id')"), config).message).toBe(
      "TypeError: Cannot read properties of undefined (reading 'id')",
    );
    expect(describeFailure(new Error('first\n  second'), config).message).toBe('first second');
  });
});
