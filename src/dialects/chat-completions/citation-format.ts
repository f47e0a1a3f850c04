import type { IncomingMessage } from "node:http";
import type { CitationStyle } from "../../answer/sources-footer.js";
import { RequestValidationError, type ValidationIssue } from "../../errors/adapter-error.js";
import type { AnnotationFormat } from "./chat-choice.js";

/**
 * Clients known to reject any chat annotation but OpenAI's `url_citation`, by their User-Agent: they
 * get `url_citation` even where the deployment's default is the interface's `file_citation`.
 */
export const STRICT_CLIENTS: readonly { name: string; userAgent: RegExp }[] = [
  // The Vercel AI SDK: @ai-sdk/openai's chat model (2.x to 4.x) validates `annotations` as an array
  // of `url_citation` only, and fails the whole answer on anything else ("Invalid JSON response").
  // Its requests have said, by version (docs/architecture/dialects.md#citation-formats): `ai/<version>` (the
  // `ai` package, whose header replaces the provider's own token), `ai-sdk/provider-utils/<version>`
  // then `ai-sdk-provider-utils/<version>`, and, called without `ai`, `ai-sdk/openai/<version>`,
  // `ai-sdk-openai/<version>` or `ai-sdk/openai-compatible/<version>`. Any product token named
  // `ai-sdk…`, or `ai/<digit>`, matches: a renamed token of the SDK's is still caught, and
  // @ai-sdk/openai-compatible, which ignores annotations, loses nothing by url_citation.
  { name: "the Vercel AI SDK (ai, @ai-sdk/openai, @ai-sdk/openai-compatible)", userAgent: /(?:^|\s)(?:ai-sdk\b|ai\/\d)/i },
];

const FORMATS = ["file_citation", "url_citation", "none"] as const;
const STYLES = ["annotations", "markdown"] as const;

/** The deployment's citation settings: `CHAT_ANNOTATIONS` and `CITATION_STYLE`. */
export interface CitationDefaults {
  annotations: AnnotationFormat;
  style: CitationStyle;
}

/**
 * The citation format of one chat request (docs/architecture/dialects.md#citation-formats): the
 * `X-Chat-Annotations` and `X-Citation-Style` headers win; then the deployment's `CHAT_ANNOTATIONS`,
 * except that a strict client gets `url_citation` where that is `file_citation`; else `url_citation`,
 * OpenAI's only chat annotation, which every client accepts (a client whose User-Agent is not known
 * must still get an answer it can read). A header with another value is a 422.
 */
export function chatCitationFormat(
  request: IncomingMessage,
  defaults: CitationDefaults,
): { annotations: AnnotationFormat; style: CitationStyle } {
  const issues: ValidationIssue[] = [];
  const annotationsHeader = headerValue(request, "x-chat-annotations", FORMATS, issues);
  const styleHeader = headerValue(request, "x-citation-style", STYLES, issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  const deployment = defaults.annotations === "file_citation" && isStrictClient(request) ? "url_citation" : defaults.annotations;
  return {
    annotations: annotationsHeader ?? deployment,
    style: styleHeader ?? defaults.style,
  };
}

/** Whether the request's User-Agent names a client known to reject `file_citation` (`STRICT_CLIENTS`). */
export function isStrictClient(request: IncomingMessage): boolean {
  const userAgent = request.headers["user-agent"] ?? "";
  return STRICT_CLIENTS.some((client) => client.userAgent.test(userAgent));
}

/** A header whose value must be one of `allowed` (case-insensitive): absent, or a 422 issue for another value. */
export function headerValue<T extends string>(
  request: IncomingMessage,
  name: string,
  allowed: readonly T[],
  issues: ValidationIssue[],
): T | undefined {
  const raw = request.headers[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim().toLowerCase();
  if (value === undefined || value === "") return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  issues.push({
    loc: ["header", name],
    msg: `Input should be ${allowed.map((option) => `'${option}'`).join(", ")}`,
    type: "enum",
    input: value,
    ctx: { expected: allowed.join(", ") },
  });
  return undefined;
}
