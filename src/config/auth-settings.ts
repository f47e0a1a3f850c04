import { z } from "zod";
import { type KeyEntry, parseKeyList } from "./key-lists.js";
import { documented, issue, optionalText } from "./variables.js";

/** The auth section's variables: whose key the adapter presents upstream, and the keys it accepts (docs/governance.md#who-asks). */
export const authVariables = z.object({
  WORKSPACE_API_KEY: documented(optionalText, "A workspace key the adapter presents upstream itself (team set-up); requires `ADAPTER_API_KEYS`"),
  ADAPTER_API_KEYS: documented(
    z.string().default(""),
    "Comma-separated client keys, each `name=key` (limits, usage, metrics and the audit trail then say the name) or a bare key (`=` only at its end: Base64 padding); a name that looks like a key is refused (docs/governance.md#named-keys); once any is listed, only listed keys are accepted. Required with `WORKSPACE_API_KEY` (unless `ADAPTER_API_KEYS_FILE` or `GATEWAY_API_KEYS` lists keys)",
  ),
  ADAPTER_API_KEYS_FILE: documented(
    optionalText,
    "A file of more client keys, `name=key` or bare, one per line or comma-separated (`#` starts a comment line); re-read when it changes, without a restart (a file that does not parse keeps the keys before it, logged)",
  ),
  GATEWAY_API_KEYS: documented(
    z.string().default(""),
    "Comma-separated keys (`name=key` or bare) of gateways in front of the adapter (LiteLLM, Portkey): a request with one may name who is behind it in `GATEWAY_IDENTITY_HEADERS`, which then stands for the key in limits, usage, metrics and the audit trail; from any other key those headers are ignored",
  ),
  GATEWAY_IDENTITY_HEADERS: documented(
    z.string().default("x-litellm-user_api_key_user_id,x-litellm-user_api_key_alias"),
    "Headers a gateway key's request names its user or team in, in order of preference (LiteLLM's, with `add_user_information_to_llm_headers`; docs/governance.md#behind-a-gateway)",
  ),
  ADMIN_API_KEYS: documented(
    z.string().default(""),
    "Comma-separated keys (`name=key` or bare) that may read usage at `GET /v1/organization/usage/completions` (any other credential gets a 403); setting them turns usage counting on. They never answer: the answer routes refuse them (403) and never send them upstream",
  ),
});

/** The auth section's variables as validated. */
export type AuthVariables = z.output<typeof authVariables>;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers a gateway identity may not come from: they carry something else that the adapter reads or the client's credential. */
const RESERVED_HEADERS = new Set(["authorization", "cookie", "host", "content-type", "content-length", "service-workspace"]);

/** A key list of the environment, each problem reported against its variable. */
function keyList(name: keyof AuthVariables & string, text: string, context: z.RefinementCtx): KeyEntry[] {
  const { entries, problems } = parseKeyList(text);
  for (const problem of problems) issue(context, name, problem);
  return entries;
}

/**
 * The auth section as the adapter reads it (`config.auth`, what `createAuthenticator` and the key
 * ring take), or start-up errors: a key belongs to one list only (a gateway's or an admin's key is
 * not also a client's), a name to one kind of key, and a deployment-held workspace key needs
 * listed client keys.
 */
export function authSettings(env: AuthVariables, context: z.RefinementCtx) {
  const clientKeys = keyList("ADAPTER_API_KEYS", env.ADAPTER_API_KEYS, context);
  const gatewayKeys = keyList("GATEWAY_API_KEYS", env.GATEWAY_API_KEYS, context);
  const adminKeys = keyList("ADMIN_API_KEYS", env.ADMIN_API_KEYS, context);
  const lists: [string, KeyEntry[]][] = [["ADAPTER_API_KEYS", clientKeys], ["GATEWAY_API_KEYS", gatewayKeys], ["ADMIN_API_KEYS", adminKeys]];
  lists.forEach(([name, entries], index) => {
    for (const [otherName, others] of lists.slice(index + 1)) {
      const keys = new Set(others.map((entry) => entry.key));
      if (entries.some((entry) => keys.has(entry.key))) issue(context, otherName, `a key of ${otherName} is also in ${name}: a key belongs to one list`);
    }
  });
  const gatewayNames = new Set(gatewayKeys.map((entry) => entry.name).filter(Boolean));
  for (const entry of clientKeys) {
    if (entry.name !== undefined && gatewayNames.has(entry.name)) {
      issue(context, "GATEWAY_API_KEYS", `'${entry.name}' names both a client key and a gateway: give them different names`);
    }
  }
  const identityHeaders = env.GATEWAY_IDENTITY_HEADERS.split(",").map((name) => name.trim().toLowerCase()).filter(Boolean);
  for (const header of identityHeaders) {
    if (!HEADER_NAME.test(header) || RESERVED_HEADERS.has(header)) {
      issue(context, "GATEWAY_IDENTITY_HEADERS", `'${header}' cannot carry an identity (a header name, not one the adapter reads for something else)`);
    }
  }
  const listed = clientKeys.length + gatewayKeys.length > 0 || env.ADAPTER_API_KEYS_FILE !== undefined;
  if (env.WORKSPACE_API_KEY && !listed) {
    issue(context, "ADAPTER_API_KEYS", "required when WORKSPACE_API_KEY is set (the adapter would otherwise lend its key to anyone)");
  }
  return {
    workspaceApiKey: env.WORKSPACE_API_KEY,
    /** `ADAPTER_API_KEYS`: the client keys, named or bare. */
    clientKeys,
    /** `ADAPTER_API_KEYS_FILE`: more client keys, re-read when the file changes. */
    clientKeysFile: env.ADAPTER_API_KEYS_FILE,
    /** `GATEWAY_API_KEYS`: keys of gateways whose identity headers are believed. */
    gatewayKeys,
    /** `GATEWAY_IDENTITY_HEADERS`, lower-cased, in order of preference. */
    identityHeaders,
    /** `ADMIN_API_KEYS`: the keys that may read usage (`GET /v1/organization/usage/completions`). */
    adminKeys,
    /** Whether client or gateway keys are listed (or a file of them is named): only those are then accepted. */
    listing: listed,
  };
}

/** Whose key goes upstream, and who may ask: named client keys, gateways and their identity headers, admin keys (`WORKSPACE_API_KEY`, `*_API_KEYS`). */
export type AuthSettings = ReturnType<typeof authSettings>;
