/**
 * The id the sealed repository token is bound to (associated data), so it cannot be moved to
 * another secret's row; the sync service seals with it and a key rotation re-seals with it.
 */
export const SYNC_TOKEN_SECRET_ID = 'sync-config-token';
