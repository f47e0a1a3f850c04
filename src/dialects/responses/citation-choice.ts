import type { IncomingMessage } from "node:http";
import { RequestValidationError, type ValidationIssue } from "../../errors/adapter-error.js";
import { headerValue } from "../chat-completions/citation-format.js";
import type { CitationFormat } from "./response-meta.js";

/** The annotation formats a response can be asked for. */
export type ResponseAnnotationFormat = CitationFormat["format"];

const FORMATS: readonly ResponseAnnotationFormat[] = ["url_citation", "file_citation", "none"];

/**
 * The annotation format of one Responses request (docs/citations.md#the-responses-api): the
 * `X-Responses-Annotations` header wins, then the deployment's `RESPONSES_ANNOTATIONS`. Another
 * header value is a 422. No client is recognised by its User-Agent here: the one that keeps only
 * `url_citation`, @ai-sdk/open-responses, sends the same `ai/<version>` as @ai-sdk/openai when
 * called through `ai`, and neither fails on the other format (one drops the annotations).
 */
export function responseAnnotationFormat(request: IncomingMessage, deployment: ResponseAnnotationFormat): CitationFormat["format"] {
  const issues: ValidationIssue[] = [];
  const asked = headerValue(request, "x-responses-annotations", FORMATS, issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  return asked ?? deployment;
}
