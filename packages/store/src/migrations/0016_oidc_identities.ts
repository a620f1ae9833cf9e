/**
 * Single sign-on users are found by who the identity provider says they are (issuer and
 * subject), never by username: a provider that lets people pick their display name must not let
 * them take over someone else's account.
 */
export const sql = `
ALTER TABLE users ADD COLUMN oidc_identity text UNIQUE;
`;
