import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure } from "../describe-failure.js";
import { type ProbeContext, sendRaw } from "../probe-context.js";

/** The health check's line, and whether the service could be reached at all (nothing else is tried when not). */
export interface HealthOutcome {
  line: CheckLine;
  reachable: boolean;
}

/**
 * `GET /health` without a credential, as the adapter's readiness asks it (any 2xx is healthy,
 * docs/upstream-assumptions.md#upstream-errors): a service out of reach names `WORKSPACE_BASE_URL`,
 * one too slow `UPSTREAM_TIMEOUT_MS`.
 */
export async function probeHealth(context: ProbeContext): Promise<HealthOutcome> {
  context.phase("health");
  const started = context.now();
  try {
    const response = await sendRaw(context, { method: "GET", path: "/health", credential: null, workspace: false });
    const ms = Math.round(context.now() - started);
    if (response.statusCode >= 200 && response.statusCode < 300) {
      return { line: checkLine("health", "pass", `GET /health answered ${response.statusCode} in ${ms} ms`), reachable: true };
    }
    return {
      line: checkLine("health", "fail", `GET /health answered ${response.statusCode}: the adapter's GET /ready would report the service down`),
      reachable: true,
    };
  } catch (error) {
    const failure = describeFailure(error, "GET /health", context.settings.config.upstream.timeoutMs);
    const reachable = failure.setting !== "WORKSPACE_BASE_URL";
    return { line: checkLine("health", "fail", `GET /health: ${failure.detail}`, failure.setting), reachable };
  }
}
