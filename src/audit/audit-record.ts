import type { AnswerSeen } from "./observed-answer.js";

/**
 * One audit record (docs/governance.md#the-audit-trail): who asked what of which workspace, how it
 * went and what it cost. Never a key: who asked is the account (a key's name, a gateway identity,
 * a grant, a bare key's hash prefix). The question and the answer only with `AUDIT_CONTENT=on`.
 */
export interface AuditRecord {
  time: string;
  request_id: string;
  key: string | null;
  workspace: string | null;
  mode: string | null;
  dialect: string;
  query_ids: string[];
  /** The HTTP status of the request that started the answer. */
  status: number;
  /** Whether the answer reached its end and was encoded whole (its usage counted): false when it failed or its client left. */
  completed: boolean;
  background: boolean;
  tokens: { input: number; output: number; reasoning: number } | null;
  sources: number;
  duration_ms: number;
  question?: string;
  answers?: string[];
}

/** What a record is made of: the request as it closed, and its answer as seen. */
export interface AuditInput {
  /** When the answer ended (milliseconds since the epoch). */
  endedAt: number;
  requestId: string;
  account: string | undefined;
  workspace: string | undefined;
  mode: string | undefined;
  route: string;
  queryIds: readonly string[];
  status: number;
  background: boolean;
  durationMs: number;
  seen: AnswerSeen | undefined;
}

/** The dialect a route speaks, by its template. */
function dialectOf(route: string): string {
  if (route.startsWith("/v1/chat/")) return "chat.completions";
  if (route.startsWith("/v1/responses")) return "responses";
  if (route.includes("mcp")) return "mcp";
  return route;
}

/** The record of one answer (pure); `content` adds the question and the answers' text. */
export function auditRecord(input: AuditInput, content: boolean): AuditRecord {
  const { seen } = input;
  const usage = seen?.usage;
  const record: AuditRecord = {
    time: new Date(input.endedAt).toISOString(),
    request_id: input.requestId,
    key: input.account ?? null,
    workspace: input.workspace ?? null,
    mode: input.mode ?? null,
    dialect: dialectOf(input.route),
    query_ids: [...input.queryIds],
    status: input.status,
    completed: usage !== undefined,
    background: input.background,
    tokens: usage ? { input: usage.promptTokens, output: usage.completionTokens, reasoning: usage.reasoningTokens } : null,
    sources: seen?.sources ?? 0,
    duration_ms: Math.round(input.durationMs),
  };
  if (content && seen) {
    record.question = seen.prompt;
    if (seen.sent) record.answers = seen.sent.map((choice) => choice.content);
  }
  return record;
}
