import type { Mode } from "../../core/modes.js";
import { RequestValidationError } from "../../errors/adapter-error.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure, describeIssues } from "../describe-failure.js";
import type { ProbeContext } from "../probe-context.js";
import type { QueryRun } from "./query-runs.js";

/**
 * The create check (docs/upstream-assumptions.md#create): each labelled query created with the
 * adapter's body, `{content, id, <MODE_FIELD>}`. A 422 that names the mode field (refused, or
 * another field required in its stead) says `MODE_FIELD` is wrong, and which name the service wants
 * when it says so. A service that answers with another id than the adapter chose is worth a
 * warning: a create whose answer is lost cannot be found again by its id.
 */
export function createLine(
  context: ProbeContext,
  runs: readonly QueryRun[],
  refusal: { mode: Mode; error: unknown } | null,
): CheckLine {
  const { modeField } = context.settings.config.upstream;
  if (refusal) {
    const { mode, error } = refusal;
    if (error instanceof RequestValidationError) {
      const named = modeFieldProblem(error, modeField);
      if (named) return checkLine("create", "fail", `POST /queries (${mode}) answered 422 ${describeIssues(error.issues)}: ${named}`, "MODE_FIELD");
    }
    const failure = describeFailure(error, "POST /queries", context.settings.config.upstream.timeoutMs);
    return checkLine("create", "fail", `POST /queries (${mode}): ${failure.detail}`, failure.setting);
  }
  const modes = runs.map((run) => run.mode).join(", ");
  const shape = `{content, id, ${modeField}}`;
  const renamed = runs.filter((run) => run.created && run.created.id !== run.body.id);
  if (renamed.length > 0) {
    return checkLine(
      "create",
      "warn",
      `POST /queries with ${shape} accepted (${modes}), but the service answered another id than the adapter chose: a create whose answer is lost cannot be found again (docs/upstream-assumptions.md#query-ids-and-lost-creates)`,
    );
  }
  return checkLine("create", "pass", `POST /queries with ${shape} accepted (${modes}); the service kept the adapter's query ids`);
}

/** What a 422 says about the mode field, or null when it says nothing about it. */
function modeFieldProblem(error: RequestValidationError, modeField: string): string | null {
  const last = (loc: (string | number)[]) => loc[loc.length - 1];
  const refused = error.issues.find((issue) => last(issue.loc) === modeField);
  const wanted = error.issues
    .filter((issue) => issue.type === "missing" && issue.loc[0] === "body" && typeof last(issue.loc) === "string" && last(issue.loc) !== "content" && last(issue.loc) !== modeField)
    .map((issue) => last(issue.loc) as string);
  if (wanted.length === 1) return `the service wants its interaction mode in '${wanted[0]}', not '${modeField}': set MODE_FIELD=${wanted[0]}`;
  if (refused) return `the service does not take '${modeField}' as the adapter sends it: set MODE_FIELD to the service's name for the interaction mode`;
  return null;
}
