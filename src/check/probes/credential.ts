import { AuthenticationError, PermissionDeniedError } from "../../errors/adapter-error.js";
import { followPages, type PageRequest } from "../../upstream/follow-pages.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure } from "../describe-failure.js";
import type { ProbeContext } from "../probe-context.js";

/** The credential check's line; whether the key may be used further; the workspaces it lists (null when listing failed). */
export interface CredentialOutcome {
  line: CheckLine;
  accepted: boolean;
  workspaces: string[] | null;
}

/**
 * The credential (docs/upstream-assumptions.md#upstream-errors): a key made up for the run must
 * be refused with 401, the configured one accepted. Both are tried on `GET /workspaces` through the
 * adapter's client (what `/v1/models` lists), every page the adapter would read.
 */
export async function probeCredential(context: ProbeContext): Promise<CredentialOutcome> {
  context.phase("credential");
  const { client, settings } = context;
  const timeoutMs = settings.config.upstream.timeoutMs;
  let madeUp: string;
  try {
    await client.listWorkspaces(context.madeUpKey, { limit: 1 });
    madeUp = "a made-up key was accepted too: the service does not seem to check keys";
  } catch (error) {
    madeUp = error instanceof AuthenticationError ? `a made-up key is refused (401 "${error.message}")` : `a made-up key: ${describeFailure(error, "GET /workspaces", timeoutMs).detail}`;
  }
  const refusedMadeUp = madeUp.startsWith("a made-up key is refused");
  try {
    const ids: string[] = [];
    const list = (request: PageRequest) => client.listWorkspaces(settings.apiKey, request);
    for await (const page of followPages(list, settings.config.upstream.maxListPages)) ids.push(...page.ids);
    const listed = `the configured key is accepted (GET /workspaces lists ${ids.length} workspace${ids.length === 1 ? "" : "s"})`;
    return { line: checkLine("credential", refusedMadeUp ? "pass" : "warn", `${madeUp}; ${listed}`), accepted: true, workspaces: ids };
  } catch (error) {
    const failure = describeFailure(error, "GET /workspaces", timeoutMs);
    if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
      return { line: checkLine("credential", "fail", `${madeUp}; the configured key: ${failure.detail}`, "WORKSPACE_API_KEY"), accepted: false, workspaces: null };
    }
    // No workspace list (404, 5xx, a timeout): the key is tried on the workspace's queries next.
    return {
      line: checkLine("credential", "warn", `${madeUp}; the configured key on GET /workspaces: ${failure.detail} (the adapter's /v1/models then lists ask, reason and build alone)`, failure.setting),
      accepted: true,
      workspaces: null,
    };
  }
}
