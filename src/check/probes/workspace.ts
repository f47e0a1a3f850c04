import { NotFoundError } from "../../errors/adapter-error.js";
import { upstreamErrorSchema } from "../../upstream/query-schemas.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure } from "../describe-failure.js";
import { callerOf, jsonOf, type ProbeContext, sendRaw } from "../probe-context.js";

/** The workspace check's line, and whether queries may be tried in it. */
export interface WorkspaceOutcome {
  line: CheckLine;
  usable: boolean;
}

/**
 * The workspace header (docs/upstream-assumptions.md#create): the configured workspace must be
 * accepted on `GET /queries` (the adapter's list call), and a request without `Service-Workspace`
 * refused, as the interface says; a workspace the key does not list is worth a warning (the
 * adapter's `/v1/models` will not show it).
 */
export async function probeWorkspace(context: ProbeContext, listed: string[] | null): Promise<WorkspaceOutcome> {
  context.phase("workspace");
  const { settings } = context;
  const workspace = settings.workspace;
  if (!workspace) {
    const known = listed && listed.length > 0 ? `; the key lists ${listed.slice(0, 10).join(", ")}` : "";
    return { line: checkLine("workspace", "fail", `no workspace to check: give --workspace ID${known}`, "DEFAULT_WORKSPACE"), usable: false };
  }
  try {
    await context.client.listQueries(callerOf(context), { limit: 1 });
  } catch (error) {
    const failure = describeFailure(error, "GET /queries", settings.config.upstream.timeoutMs);
    const setting = error instanceof NotFoundError ? "DEFAULT_WORKSPACE" : failure.setting;
    return { line: checkLine("workspace", "fail", `GET /queries in '${workspace}': ${failure.detail}`, setting), usable: false };
  }
  const parts = [`'${workspace}' is accepted (GET /queries)`];
  let level: "pass" | "warn" = "pass";
  try {
    const bare = await sendRaw(context, { method: "GET", path: "/queries", search: new URLSearchParams({ limit: "1" }), workspace: false });
    const detail = upstreamErrorSchema.safeParse(jsonOf(bare.text));
    const namesHeader = detail.success && Array.isArray(detail.data.detail) && detail.data.detail.some((issue) => issue.loc.map(String).map((part) => part.toLowerCase()).includes("service-workspace"));
    if (bare.statusCode >= 200 && bare.statusCode < 300) {
      level = "warn";
      parts.push("a request without Service-Workspace is answered too (the service has a default workspace; the adapter always sends one)");
    } else {
      parts.push(`a request without Service-Workspace is refused (${bare.statusCode}${namesHeader ? " naming the header" : ""})`);
    }
  } catch (error) {
    parts.push(`a request without Service-Workspace: ${describeFailure(error, "GET /queries", settings.config.upstream.timeoutMs).detail}`);
  }
  if (listed && listed.length > 0 && !listed.includes(workspace)) {
    level = "warn";
    parts.push(`'${workspace}' is not among the ${listed.length} workspaces the key lists (the adapter's /v1/models will not name it)`);
  }
  return { line: checkLine("workspace", level, parts.join("; ")), usable: true };
}
