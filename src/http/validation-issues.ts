import type { z } from "zod";
import type { ValidationIssue } from "../errors/adapter-error.js";

const TYPE_NAMES: Record<string, [type: string, msg: string]> = {
  string: ["string_type", "Input should be a valid string"],
  number: ["float_type", "Input should be a valid number"],
  int: ["int_type", "Input should be a valid integer"],
  boolean: ["bool_type", "Input should be a valid boolean"],
  array: ["list_type", "Input should be a valid list"],
  object: ["dict_type", "Input should be a valid dictionary"],
  record: ["dict_type", "Input should be a valid dictionary"],
};

/**
 * Maps zod issues to the interface's 422 items (docs/architecture.md#errors: `{loc, msg, type, input?, ctx?}`),
 * worded and typed as FastAPI/pydantic does, so clients of the service see one error dialect.
 */
export function toValidationIssues(
  issues: readonly z.core.$ZodIssue[],
  where: "body" | "query" | "header",
): ValidationIssue[] {
  return issues.flatMap((issue): ValidationIssue[] => {
    const matched = issue.code === "invalid_union" ? matchedBranch(issue) : null;
    if (matched) return toValidationIssues(matched.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] })), where);
    return [issueOf(issue, where)];
  });
}

/**
 * The issues of the one branch of a union whose type the input has (a list of items whose third
 * item is wrong): worth reporting where they are, rather than "none of the branches". Null when no
 * branch, or several, took the input's type.
 */
function matchedBranch(issue: z.core.$ZodIssueInvalidUnion): readonly z.core.$ZodIssue[] | null {
  const typed = issue.errors.filter((branch) => !branch.every((inner) => inner.code === "invalid_type" && inner.path.length === 0));
  return typed.length === 1 ? (typed[0] as readonly z.core.$ZodIssue[]) : null;
}

function issueOf(issue: z.core.$ZodIssue, where: "body" | "query" | "header"): ValidationIssue {
  const loc: (string | number)[] = [
    where,
    ...issue.path.map((part) => (typeof part === "symbol" ? String(part) : part)),
  ];
  const input = "input" in issue ? issue.input : undefined;
  const base = (type: string, msg: string, ctx?: Record<string, unknown>): ValidationIssue => {
    const item: ValidationIssue = { loc, msg, type };
    if (input !== undefined) item.input = input;
    if (ctx) item.ctx = ctx;
    return item;
  };
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) return base("missing", "Field required");
      if (issue.path.length === 0 && where === "body") {
        return base(
          "model_attributes_type",
          "Input should be a valid dictionary or object to extract fields from",
        );
      }
      const [type, msg] = TYPE_NAMES[issue.expected] ?? ["type_error", issue.message];
      return base(type, msg);
    }
    case "too_small":
      return issue.origin === "array" || issue.origin === "string"
        ? base(
            "too_short",
            `${issue.origin === "array" ? "List" : "String"} should have at least ${issue.minimum} item${Number(issue.minimum) === 1 ? "" : "s"}`,
            { min_length: Number(issue.minimum) },
          )
        : base("greater_than_equal", `Input should be greater than or equal to ${issue.minimum}`, {
            ge: Number(issue.minimum),
          });
    case "too_big":
      return issue.origin === "array" || issue.origin === "string"
        ? base(
            "too_long",
            `${issue.origin === "array" ? "List" : "String"} should have at most ${issue.maximum} items`,
            { max_length: Number(issue.maximum) },
          )
        : base("less_than_equal", `Input should be less than or equal to ${issue.maximum}`, {
            le: Number(issue.maximum),
          });
    case "invalid_union":
      return base("union_error", "Input should be a valid string, a list of content parts or null");
    case "invalid_format":
      return base("string_pattern_mismatch", issue.message);
    case "custom": {
      const params = (issue.params ?? {}) as { type?: string; ctx?: Record<string, unknown> };
      return base(params.type ?? "value_error", issue.message, params.ctx);
    }
    default:
      return base("value_error", issue.message);
  }
}
