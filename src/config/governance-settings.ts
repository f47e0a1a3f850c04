import { z } from "zod";
import { documented, integer, issue, optionalText } from "./variables.js";

/** Where the audit trail goes (docs/governance.md#the-audit-trail). */
export type AuditSink = { kind: "stdout" } | { kind: "otlp" } | { kind: "file"; path: string };

/** The governance section's variables: usage counting and the audit trail (docs/governance.md). */
export const governanceVariables = z.object({
  USAGE_COUNTING: documented(
    z.enum(["auto", "on", "off"]).default("auto"),
    "Tokens and answers per key (or gateway identity), workspace, mode and UTC day, counted as answers are charged: in Redis with `REDIS_URL` (memory otherwise), served by the usage endpoint and as Prometheus counters; `auto`: on when `ADMIN_API_KEYS` is set",
  ),
  USAGE_RETENTION_DAYS: documented(integer(400, 1, 3660), "How many UTC days of usage are kept"),
  AUDIT_LOG: documented(
    optionalText,
    "An audit record per answer (time, request id, key name or identity, workspace, mode, dialect, query ids, status, tokens, sources, duration; never a key): `stdout`, `otlp` (OpenTelemetry logs to the `OTEL_EXPORTER_OTLP_*` endpoint) or a file's path (appended)",
    "unset (off)",
  ),
  AUDIT_CONTENT: documented(z.enum(["on", "off"]).default("off"), "`on` adds the question and the answer's text to each audit record"),
});

/** The governance section's variables as validated. */
export type GovernanceVariables = z.output<typeof governanceVariables>;

/**
 * The governance section as the adapter reads it (`config.governance`, docs/governance.md): usage
 * counting (on by itself once `ADMIN_API_KEYS`, of the auth section, lists a key that may read it)
 * and the audit trail.
 */
export function governanceSettings(env: GovernanceVariables, adminKeys: number, context: z.RefinementCtx) {
  const counting = env.USAGE_COUNTING === "on" || (env.USAGE_COUNTING === "auto" && adminKeys > 0);
  if (env.USAGE_COUNTING === "off" && adminKeys > 0) {
    issue(context, "ADMIN_API_KEYS", "reads the usage that USAGE_COUNTING=off does not count: unset one of them");
  }
  const audit: { sink: AuditSink; content: boolean } | undefined = env.AUDIT_LOG === undefined
    ? undefined
    : { sink: auditSink(env.AUDIT_LOG), content: env.AUDIT_CONTENT === "on" };
  return {
    /** Usage per key, workspace and mode, counted when answers are charged; undefined when off. */
    usage: counting ? { retentionDays: env.USAGE_RETENTION_DAYS } : undefined,
    /** The audit trail, or undefined when off. */
    audit,
  };
}

/** Who used the workspace and how much: usage counting and the audit trail (`USAGE_*`, `AUDIT_*`). */
export type GovernanceSettings = ReturnType<typeof governanceSettings>;

/** `AUDIT_LOG`: `stdout`, `otlp`, or a file's path. */
function auditSink(value: string): AuditSink {
  if (value === "stdout") return { kind: "stdout" };
  if (value === "otlp") return { kind: "otlp" };
  return { kind: "file", path: value };
}
