import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { connectionOfOptions, type ConnectionOptions } from '../../../src/faces/cli/directory-commands.ts';

// `providers create|update` turn their connection options into the API's connection object; the
// use case then decides what is complete. Only the options' own contradictions are refused here.

const fromStdin = () => 'piped-secret';

const cases: Array<[string, ConnectionOptions, Record<string, unknown> | undefined]> = [
  ['no connection option: the connection is left alone', {}, undefined],
  ['--files-only', { filesOnly: true }, { kind: 'files' }],
  [
    'every reference interface option',
    { baseUrl: 'https://a', tokenUrl: 'https://t', clientId: 'c', clientSecret: 's' },
    { kind: 'reference_api', base_url: 'https://a', token_url: 'https://t', client_id: 'c', client_secret: 's' },
  ],
  ['the secret alone (a rotation)', { clientSecret: 's' }, { kind: 'reference_api', client_secret: 's' }],
  ['the secret from standard input', { clientSecretStdin: true, clientId: 'c' }, { kind: 'reference_api', client_id: 'c', client_secret: 'piped-secret' }],
  ['the base URL alone', { baseUrl: 'https://a' }, { kind: 'reference_api', base_url: 'https://a' }],
];

describe('connectionOfOptions', () => {
  it.each(cases)('%s', (_name, options, expected) => {
    expect(connectionOfOptions(options, fromStdin)).toEqual(expected);
  });

  it.each<ConnectionOptions>([
    { filesOnly: true, baseUrl: 'https://a' },
    { filesOnly: true, clientSecret: 's' },
    { filesOnly: true, clientSecretStdin: true },
  ])('refuses --files-only with a reference interface option: %o', (options) => {
    expect(() => connectionOfOptions(options, fromStdin)).toThrow(InvalidArgumentError);
  });

  it('reads standard input only when asked to', () => {
    let reads = 0;
    connectionOfOptions({ clientSecret: 's' }, () => String(++reads));
    expect(reads).toBe(0);
  });
});
