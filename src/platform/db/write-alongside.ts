import type { RawBuilder } from 'kysely';

/**
 * A write of another area that must commit in the same statement as the one it is handed to: a
 * data-modifying statement the host puts in a CTE of its own. PostgreSQL runs such a CTE to completion
 * whether or not the rest of the statement reads it, so the host only has to place it. It saves the
 * round trip a statement of its own would cost (see storeResponseAlongside).
 */
export type WriteAlongside = RawBuilder<unknown>;
