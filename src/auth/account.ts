import { credentialHash } from "./credential-hash.js";

/**
 * Who asks, as usage, limits' messages, metrics and the audit trail name them
 * (docs/governance.md#who-asks): never a key.
 */
export interface Account {
  /**
   * A named key's name (`team-search`), a gateway's identity (`litellm/alice`), an OAuth grant
   * (`grant:<hash prefix>`), or a bare key's hash prefix (`key:<hash prefix>`): OpenAI's usage
   * `api_key_id`.
   */
  readonly id: string;
  /**
   * The Prometheus label: a named key's or gateway's name, `oauth`, or `other` for every bare key
   * (labels stay as many as the deployment names).
   */
  readonly label: string;
}

/** The label every key without a name of its own shares. */
export const UNNAMED_LABEL = "other";

/** The labels that name nobody: every bare key's, every unnamed gateway's, every OAuth grant's. */
const ANONYMOUS_LABELS: ReadonlySet<string> = new Set([UNNAMED_LABEL, "gateway", "oauth"]);

/**
 * An account's label where the metrics may not name keys (`METRICS_KEY_NAMES`,
 * docs/observability.md#metrics): `named` for every named key and gateway, the others as they are.
 */
export function labelWithoutNames(label: string): string {
  return ANONYMOUS_LABELS.has(label) ? label : "named";
}

/** Characters of a hash that name a bare key or a grant: enough to tell them apart, too few to matter. */
const HASH_PREFIX = 12;

/** Who asks with a key listed under a name (or a gateway's key with no identity header): the name, everywhere. */
export function namedAccount(name: string): Account {
  return { id: name, label: name };
}

/** Who asks with a key that has no name: its hash, and the shared label. */
export function bareAccount(hash: string): Account {
  return { id: `key:${hash.slice(0, HASH_PREFIX)}`, label: UNNAMED_LABEL };
}

/** A gateway listed without a name (and no identity header): its hash, labelled `gateway`. */
export function unnamedGatewayAccount(hash: string): Account {
  return { id: `gateway:${hash.slice(0, HASH_PREFIX)}`, label: "gateway" };
}

/** Who asks with an OAuth grant (docs/mcp-oauth.md): the grant's principal (a person, in the team set-up). */
export function oauthAccount(principal: string): Account {
  return { id: `grant:${principal.slice(0, HASH_PREFIX)}`, label: "oauth" };
}

/** Who a gateway says is behind its request: `<gateway>/<identity>`, labelled by the gateway. */
export function gatewayAccount(gateway: Account, identity: string): Account {
  return { id: `${gateway.id}/${identity}`, label: gateway.label };
}

/**
 * The principal of a named key: one per name, so that a name's keys (an old and a new one while
 * it is rotated) share its conversations, limits and quotas. Apart from every credential's hash
 * (no key holds a line break).
 */
export function namedPrincipal(kind: "key" | "gateway", name: string): string {
  return credentialHash(`${kind}-name\n${name}`);
}

/** The principal of a gateway's identity: its conversations, stored responses, limits and quotas are its own. */
export function gatewayPrincipal(gatewayPrincipalOf: string, identity: string): string {
  return credentialHash(`gateway-identity\n${gatewayPrincipalOf}\n${identity}`);
}
