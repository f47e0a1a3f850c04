import { z } from "zod";
import type { KeyEntry } from "./key-lists.js";
import { documented, issue, optionalText } from "./variables.js";

/** The metrics section's variables: where `/metrics` is served, behind what, and what its labels may name (docs/observability.md#metrics). */
export const metricsVariables = z.object({
  METRICS_PORT: documented(
    optionalText.pipe(z.coerce.number<string | undefined>().int().min(0).max(65535).optional()),
    "A port of its own for `GET /metrics` (on `HOST`; nothing else is served there), so that only what reaches that port can scrape it: the API port then answers 404 at `/metrics`",
    "unset (`/metrics` on `PORT`)",
  ),
  METRICS_API_KEY: documented(
    optionalText.pipe(z.string().regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces").optional()),
    "A key `GET /metrics` asks for (`Authorization: Bearer …`, Prometheus' `authorization` setting): without it or with another, 401. Never accepted at the answer routes nor sent upstream",
    "unset (no credential asked)",
  ),
  METRICS_KEY_NAMES: documented(
    z.enum(["auto", "on", "off"]).default("auto"),
    "Whether the usage counters' `key` label says the names of keys and gateways (`team-search`), or `named` for all of them: `auto` says them only where not everyone who reaches the API port can read them (`METRICS_PORT` or `METRICS_API_KEY` set)",
  ),
});

/** The metrics section's variables as validated. */
export type MetricsVariables = z.output<typeof metricsVariables>;

/**
 * The metrics section as the adapter reads it (`config.metrics`): its own port must not be the
 * API's, and its key must be in no key list (a key answers, or reads usage, or scrapes: one right each).
 */
export function metricsSettings(
  env: MetricsVariables,
  others: { apiPort: number; keyLists: readonly (readonly KeyEntry[])[] },
  context: z.RefinementCtx,
) {
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== 0 && env.METRICS_PORT === others.apiPort) {
    issue(context, "METRICS_PORT", "is the API's port (PORT): give /metrics a port of its own, or unset it");
  }
  const apiKey = env.METRICS_API_KEY;
  if (apiKey !== undefined && others.keyLists.some((entries) => entries.some((entry) => entry.key === apiKey))) {
    issue(context, "METRICS_API_KEY", "is also a key of ADAPTER_API_KEYS, GATEWAY_API_KEYS or ADMIN_API_KEYS: a key belongs to one list");
  }
  const guarded = env.METRICS_PORT !== undefined || apiKey !== undefined;
  return {
    /** `METRICS_PORT`: `/metrics` is served there alone (0: any free port), and not on the API port; undefined: on the API port. */
    port: env.METRICS_PORT,
    /** `METRICS_API_KEY`: the bearer key a scrape must send, or undefined for none. */
    apiKey,
    /** Whether the usage counters' `key` label names keys and gateways (else `named`): on, or `auto` with the endpoint guarded. */
    keyNames: env.METRICS_KEY_NAMES === "on" || (env.METRICS_KEY_NAMES === "auto" && guarded),
  };
}

/** Where `/metrics` is served, the key it asks for, and whether its labels name keys (`METRICS_*`). */
export type MetricsSettings = ReturnType<typeof metricsSettings>;
