import type { IncomingMessage } from "node:http";
import type { CitationStyle } from "../../answer/sources-footer.js";
import { RequestValidationError, type ValidationIssue } from "../../errors/adapter-error.js";
import type { AnnotationFormat } from "./chat-choice.js";

/**
 * Clients known to reject any chat annotation but OpenAI's `url_citation`, by their User-Agent:
 * they get `url_citation` unless the request or the deployment says otherwise.
 */
export const STRICT_CLIENTS: readonly { name: string; userAgent: RegExp }[] = [
  // @ai-sdk/openai's chat model validates `annotations` with a schema of url_citation only. Its
  // requests say `ai-sdk-provider-utils/<version>` (some versions `ai-sdk-openai/` or
  // `ai-sdk/openai/`); other AI SDK providers (@ai-sdk/openai-compatible) ignore annotations, so
  // url_citation costs them nothing.
  { name: "the Vercel AI SDK (@ai-sdk/openai, @ai-sdk/openai-compatible)", userAgent: /\bai-sdk(?:-provider-utils|[/-]openai)\/\d/i },
];

const FORMATS = ["file_citation", "url_citation", "none"] as const;
const STYLES = ["annotations", "markdown"] as const;

/** The deployment's citation settings: `CHAT_ANNOTATIONS` (unset: by client) and `CITATION_STYLE`. */
export interface CitationDefaults {
  annotations: AnnotationFormat | undefined;
  style: CitationStyle;
}

/**
 * The citation format of one chat request (docs/architecture.md#citation-formats): the
 * `X-Chat-Annotations` and `X-Citation-Style` headers win; then the deployment's `CHAT_ANNOTATIONS`
 * when set; then `url_citation` for a strict client; else the interface's `file_citation`. A header
 * with another value is a 422.
 */
export function chatCitationFormat(
  request: IncomingMessage,
  defaults: CitationDefaults,
): { annotations: AnnotationFormat; style: CitationStyle } {
  const issues: ValidationIssue[] = [];
  const annotationsHeader = headerValue(request, "x-chat-annotations", FORMATS, issues);
  const styleHeader = headerValue(request, "x-citation-style", STYLES, issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  const userAgent = request.headers["user-agent"] ?? "";
  const strict = STRICT_CLIENTS.some((client) => client.userAgent.test(userAgent));
  return {
    annotations: annotationsHeader ?? defaults.annotations ?? (strict ? "url_citation" : "file_citation"),
    style: styleHeader ?? defaults.style,
  };
}

function headerValue<T extends string>(
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
