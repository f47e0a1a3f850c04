import { z } from "zod";
import { documented, issue, listOf, optionalText } from "./variables.js";

/** The auth section's variables: whose key the adapter presents upstream. */
export const authVariables = z.object({
  WORKSPACE_API_KEY: documented(optionalText, "A workspace key the adapter presents upstream itself (team set-up); requires `ADAPTER_API_KEYS`"),
  ADAPTER_API_KEYS: documented(z.string().default(""), "Comma-separated client keys accepted when `WORKSPACE_API_KEY` is set"),
});

/** The auth section's variables as validated. */
export type AuthVariables = z.output<typeof authVariables>;

/** The auth section as the adapter reads it (`config.auth`, what `createAuthenticator` takes). */
export function authSettings(env: AuthVariables, context: z.RefinementCtx) {
  const adapterApiKeys = listOf(env.ADAPTER_API_KEYS);
  if (env.WORKSPACE_API_KEY && adapterApiKeys.length === 0) {
    issue(context, "ADAPTER_API_KEYS", "required when WORKSPACE_API_KEY is set (the adapter would otherwise lend its key to anyone)");
  }
  return { workspaceApiKey: env.WORKSPACE_API_KEY, adapterApiKeys };
}

/** The client's own credential passed through, or the deployment's key behind its own client keys (`WORKSPACE_API_KEY`, `ADAPTER_API_KEYS`). */
export type AuthSettings = ReturnType<typeof authSettings>;
