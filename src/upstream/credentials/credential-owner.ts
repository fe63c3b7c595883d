/**
 * Whose credentials one upstream connection carries. A connection no single caller owns (the
 * primary, a pooled lease, a list-only connection) has no owner and can only carry the gateway's
 * own credentials (`static` headers, `clientCredentials`). A connection bound to one principal
 * (`isolation: "principal"`) or to one 2025 session (its own connection under
 * `isolation: "session"`) names it, so a per-user credential mode can pick that user's token.
 * The values are identities compared exactly, never logged.
 */
export type CredentialOwner =
  | { readonly kind: 'principal'; readonly principal: string | undefined }
  | { readonly kind: 'session'; readonly session: string; readonly principal: string | undefined };
