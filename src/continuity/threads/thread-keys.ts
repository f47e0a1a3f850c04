import { hash } from "node:crypto";
import type { PlainMessage } from "../../core/plain-message.js";

/** Who and where a thread belongs to: a hash of the client's credential, and the workspace. */
export interface ThreadScope {
  principal: string;
  workspace: string;
}

function digest(parts: unknown[]): string {
  return hash("sha256", JSON.stringify(parts), "base64url");
}

/**
 * A message as the thread memory compares it: user and assistant text only (system and tool messages
 * are not part of the upstream thread), with a leading `<think>` block and outer white space
 * removed, since chat UIs strip reasoning and trim when they send the history back.
 */
function canonical(messages: readonly PlainMessage[]): [string, string][] {
  return messages
    .filter((message) => message.role === "user" || message.role === "assistant")
    .map((message) => [message.role, message.text.replace(/^\s*<think>[\s\S]*?<\/think>/, "").trim()]);
}

/** The key a request is looked up by: its history up to its last assistant message; null on a first turn. */
export function historyLookupKey(scope: ThreadScope, messages: readonly PlainMessage[]): string | null {
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  if (lastAssistant < 0) return null;
  return `h:${digest([scope.principal, scope.workspace, canonical(messages.slice(0, lastAssistant + 1))])}`;
}

/** The key a finished turn is remembered under: the history through the prompt, plus the answer. */
export function historyRememberKey(
  scope: ThreadScope,
  messages: readonly PlainMessage[],
  promptIndex: number,
  answer: string,
): string {
  const history = [...messages.slice(0, promptIndex + 1), { role: "assistant", text: answer }];
  return `h:${digest([scope.principal, scope.workspace, canonical(history)])}`;
}

/** The key of a client-given conversation id (a header such as `X-Conversation-Id`). */
export function conversationIdKey(scope: ThreadScope, conversationId: string): string {
  return `c:${digest([scope.principal, scope.workspace, conversationId])}`;
}

/**
 * The key of a handle the adapter gave a client for a thread (docs/responses-api.md): a forced
 * function's `call_id` (`call:<id>`), whose output continues the query that asked for the call; a
 * compaction's content (`compaction:<token>`). Bound to the credential and workspace, like every key.
 */
export function handleKey(scope: ThreadScope, handle: string): string {
  return `k:${digest([scope.principal, scope.workspace, handle])}`;
}
