/**
 * The version of this API's contract (semantic versioning), as `info.version` of /openapi.json and the
 * `API-Version` header of every response. A new field, operation, event type or enum value is a minor
 * release: clients must ignore what they do not know. A change that could break a client (a field
 * removed or renamed, a type narrowed, a status code changed) would be a new major version served
 * beside the old one under its own path prefix, never a change in place. docs/api-changelog.md
 * records every release; a test holds its newest heading to this constant.
 */
export const API_VERSION = '1.1.0';

export const API_VERSION_HEADER = 'api-version';
