/**
 * What every OAuth access and refresh token the adapter issues starts with (docs/mcp-oauth.md):
 * a token is recognised as one wherever it is sent, so that a token presented as a key on the
 * static-key routes is refused instead of being passed upstream (the MCP specification forbids
 * token passthrough).
 */
export const OAUTH_TOKEN_PREFIX = "wsoauth_";
