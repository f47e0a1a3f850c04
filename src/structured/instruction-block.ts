import type { StructuredRequest } from "./structured-request.js";

/** The lines that open and close the instruction block in a query's content. */
export const BLOCK_START = "<<<structured-answer";
/** The line that closes the instruction block. */
export const BLOCK_END = "structured-answer>>>";
const REPAIR_LEAD = "Your previous reply was not the JSON asked for";

/** The instruction block's text: what to reply with, where citations go, and the schema. */
function block(request: StructuredRequest, corrected: boolean): string {
  const what = request.schema ? "one JSON value that matches the JSON Schema below" : "one JSON object";
  const lines = [
    BLOCK_START,
    `Reply with only ${corrected ? "the corrected JSON: " : ""}${what}. No text before or after it, no code fence.`,
    "Cite your sources as usual, with markers such as [1], inside string values only; a Sources list may follow the JSON.",
  ];
  if (request.kind === "function" && request.name) lines.push(`The JSON is the arguments of the function "${request.name}".`);
  if (request.description) lines.push(`Description: ${request.description}`);
  if (request.schema) lines.push(`Schema${request.name ? ` "${request.name}"` : ""}:`, JSON.stringify(request.schema));
  lines.push(BLOCK_END);
  return lines.join("\n");
}

/**
 * The query's content for a structured answer (docs/structured-answers.md#what-is-sent-to-the-workspace):
 * the question, then a delimited block asking for only a JSON value matching the schema (or any
 * JSON object for `json_object`), with citation markers inside string values.
 */
export function withInstructions(question: string, request: StructuredRequest): string {
  return `${question}\n\n${block(request, false)}`;
}

/**
 * The content of the repair turn, sent in the same workspace thread when the first reply did not
 * validate: the validator's first error (a JSON pointer into the reply, and its message) and the
 * block again, asking for only the corrected JSON.
 */
export function repairInstructions(problem: string, request: StructuredRequest): string {
  return `${REPAIR_LEAD}: ${problem}\n\n${block(request, true)}`;
}

/** What a workspace reads from a query's content that carries the block (the embedded workspace's JSON mode). */
export interface ReadInstructions {
  /** The question before the block; on a repair turn, the line naming the problem. */
  question: string;
  /** The schema asked for, or null for any JSON object. */
  schema: unknown;
  /** Whether this is the repair turn. */
  repair: boolean;
}

/** The block of a query's content, when it ends with one (null otherwise, or when its schema does not parse). */
export function readInstructions(content: string): ReadInstructions | null {
  const at = content.lastIndexOf(`${BLOCK_START}\n`);
  const trimmed = content.trimEnd();
  if (at < 0 || (at > 0 && content[at - 1] !== "\n") || !trimmed.endsWith(BLOCK_END)) return null;
  const lines = trimmed.slice(at + BLOCK_START.length + 1, trimmed.length - BLOCK_END.length).split("\n");
  const schemaLine = lines.findIndex((line) => /^Schema(?: ".*")?:$/.test(line));
  let schema: unknown = null;
  if (schemaLine >= 0) {
    try {
      schema = JSON.parse(lines.slice(schemaLine + 1).join("\n"));
    } catch {
      return null;
    }
  }
  const question = content.slice(0, at).trim();
  return { question, schema, repair: question.startsWith(REPAIR_LEAD) };
}
