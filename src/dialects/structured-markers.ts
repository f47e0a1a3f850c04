import type { IncomingMessage } from "node:http";
import { RequestValidationError, type ValidationIssue } from "../errors/adapter-error.js";
import { headerValue } from "./chat-completions/citation-format.js";

/** What happens to citation markers inside a structured answer's strings. */
export type StructuredMarkers = "keep" | "strip";

const MARKERS = ["keep", "strip"] as const;

/**
 * The request's `X-Structured-Citations` (docs/structured-answers.md#markers-inside-strings), else
 * the deployment's `STRUCTURED_CITATIONS`: `keep` leaves `[1]` inside the JSON's strings, `strip`
 * takes it out (the sources stay beside the JSON). Another value is a 422, as the citation headers'.
 */
export function structuredMarkers(request: IncomingMessage, fallback: StructuredMarkers): StructuredMarkers {
  const issues: ValidationIssue[] = [];
  const value = headerValue(request, "x-structured-citations", MARKERS, issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  return value ?? fallback;
}
