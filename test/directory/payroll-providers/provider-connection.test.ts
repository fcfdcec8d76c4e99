import { describe, expect, it } from 'vitest';
import {
  connectionAfterChange,
  connectionOfColumns,
  type ProviderConnectionChange,
  type ProviderConnectionSetting,
  type StoredProviderConnection,
} from '../../../src/directory/payroll-providers/provider-connection.ts';

const api: Extract<ProviderConnectionSetting, { kind: 'reference_api' }> = {
  kind: 'reference_api',
  base_url: 'https://payroll.example/api',
  token_url: 'https://payroll.example/token',
  client_id: 'us',
  client_secret: 'sealed:old',
};
const files: StoredProviderConnection = { kind: 'files' };
const withoutCredentials: StoredProviderConnection = { kind: 'reference_api', base_url: 'https://old.example', token_url: null, client_id: null, client_secret: null };
const everything = { base_url: 'https://new.example/api', token_url: 'https://new.example/token', client_id: 'new-id', client_secret: 'new-secret' };

const cases: Array<[string, StoredProviderConnection, ProviderConnectionChange, ReturnType<typeof connectionAfterChange>]> = [
  ['API to files', api, { kind: 'files' }, { connection: { kind: 'files' }, secretReplaced: false }],
  ['files to files', files, { kind: 'files' }, { connection: { kind: 'files' }, secretReplaced: false }],
  ['files to API with every field', files, { kind: 'reference_api', ...everything }, { connection: { kind: 'reference_api', ...everything }, secretReplaced: true }],
  ['files to API without the secret', files, { kind: 'reference_api', ...everything, client_secret: undefined }, { missing: ['client_secret'] }],
  ['files to API with the base URL only', files, { kind: 'reference_api', base_url: 'https://x.example' }, { missing: ['token_url', 'client_id', 'client_secret'] }],
  ['files to API with nothing', files, { kind: 'reference_api' }, { missing: ['base_url', 'token_url', 'client_id', 'client_secret'] }],
  ['API: rotate the secret only', api, { kind: 'reference_api', client_secret: 'rotated' }, { connection: { ...api, client_secret: 'rotated' }, secretReplaced: true }],
  [
    'API: move the URLs, keep the secret',
    api,
    { kind: 'reference_api', base_url: 'https://b.example', token_url: 'https://t.example' },
    { connection: { ...api, base_url: 'https://b.example', token_url: 'https://t.example' }, secretReplaced: false },
  ],
  ['API: new client id, keep the secret', api, { kind: 'reference_api', client_id: 'other' }, { connection: { ...api, client_id: 'other' }, secretReplaced: false }],
  ['API: change nothing of it', api, { kind: 'reference_api' }, { connection: api, secretReplaced: false }],
  ['API: replace every field', api, { kind: 'reference_api', ...everything }, { connection: { kind: 'reference_api', ...everything }, secretReplaced: true }],
  [
    'API without credentials: a new base URL alone',
    withoutCredentials,
    { kind: 'reference_api', base_url: 'https://b.example' },
    { missing: ['token_url', 'client_id', 'client_secret'] },
  ],
  [
    'API without credentials: given them all',
    withoutCredentials,
    { kind: 'reference_api', token_url: 'https://t.example', client_id: 'c', client_secret: 's' },
    { connection: { kind: 'reference_api', base_url: 'https://old.example', token_url: 'https://t.example', client_id: 'c', client_secret: 's' }, secretReplaced: true },
  ],
];

describe('connectionAfterChange', () => {
  it.each(cases)('%s', (_name, current, change, expected) => {
    expect(connectionAfterChange(current, change)).toEqual(expected);
  });
});

describe('connectionOfColumns', () => {
  it('reads a base URL as the reference interface, and no base URL as files only', () => {
    expect(connectionOfColumns({ api_base_url: null, api_token_url: null, api_client_id: null, api_client_secret: null })).toEqual({ kind: 'files' });
    expect(connectionOfColumns({ api_base_url: 'https://a', api_token_url: 'https://t', api_client_id: 'c', api_client_secret: 's' })).toEqual({
      kind: 'reference_api',
      base_url: 'https://a',
      token_url: 'https://t',
      client_id: 'c',
      client_secret: 's',
    });
    expect(connectionOfColumns({ api_base_url: 'https://a', api_token_url: null, api_client_id: null, api_client_secret: null })).toEqual({
      kind: 'reference_api',
      base_url: 'https://a',
      token_url: null,
      client_id: null,
      client_secret: null,
    });
  });
});
