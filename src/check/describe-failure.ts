import {
  AdapterError,
  AuthenticationError,
  GatewayTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  RequestValidationError,
  UpstreamError,
  type ValidationIssue,
} from "../errors/adapter-error.js";
import { transportError } from "../upstream/upstream-errors.js";

/** A failed call as a check line says it: what happened, and the setting that would change it. */
export interface DescribedFailure {
  detail: string;
  setting?: string;
}

/**
 * Says what went wrong with a call, as the adapter itself would have read it (its error hierarchy,
 * docs/upstream-assumptions.md#upstream-errors): a refused key names `WORKSPACE_API_KEY`, a call
 * that took too long `UPSTREAM_TIMEOUT_MS`, a service out of reach `WORKSPACE_BASE_URL`. Raw
 * transport errors (a probe's own calls) go through the adapter's mapping first.
 */
export function describeFailure(error: unknown, what: string, timeoutMs: number): DescribedFailure {
  const failure = error instanceof AdapterError ? error : transportError(error, what, undefined);
  if (failure instanceof AuthenticationError) return { detail: `the service refused the key (401 ${quoted(failure.message)})`, setting: "WORKSPACE_API_KEY" };
  if (failure instanceof PermissionDeniedError) return { detail: `the service refused the key here (403 ${quoted(failure.message)})`, setting: "WORKSPACE_API_KEY" };
  if (failure instanceof NotFoundError) return { detail: `404 ${quoted(failure.message)}` };
  if (failure instanceof RequestValidationError) return { detail: `422 ${describeIssues(failure.issues)}` };
  if (failure instanceof GatewayTimeoutError) {
    return /did not answer/.test(failure.message) ? { detail: `no answer within ${timeoutMs} ms`, setting: "UPSTREAM_TIMEOUT_MS" } : { detail: failure.message };
  }
  if (failure instanceof UpstreamError && /Could not reach/.test(failure.message)) {
    const code = /\(([A-Z_]+)\)$/.exec(failure.message)?.[1];
    return { detail: `could not reach the service${code ? ` (${code})` : ""}`, setting: "WORKSPACE_BASE_URL" };
  }
  if (failure instanceof AdapterError) return { detail: failure.message.replace("The workspace service", "the service") };
  return { detail: failure instanceof Error ? failure.message : String(failure) };
}

/** A 422's issues in one line: `body.mode: Extra inputs are not permitted (extra_forbidden)`. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((issue) => `${issue.loc.join(".")}: ${issue.msg} (${issue.type})`).join("; ");
}

function quoted(text: string): string {
  const short = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return `"${short}"`;
}
