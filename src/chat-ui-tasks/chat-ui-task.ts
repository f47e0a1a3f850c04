import type { PlainMessage } from "../core/plain-message.js";

/** The chat UIs whose housekeeping requests are recognised (docs/chat-ui-tasks.md). */
export const CHAT_UIS = ["open-webui", "librechat", "lobe-chat"] as const;
/** One chat UI. */
export type ChatUi = (typeof CHAT_UIS)[number];

/**
 * What a housekeeping request asks for (docs/chat-ui-tasks.md): a chat's title, its tags,
 * follow-up questions, an autocompletion of what the user is typing, search queries for the UI's
 * own retrieval, a prompt for an image, an emoji for a voice call, or the choice of one of the
 * UI's own tools.
 */
export const TASK_KINDS = ["title", "tags", "follow_ups", "queries", "autocomplete", "image_prompt", "emoji", "tool_selection"] as const;
/** One kind of housekeeping. */
export type TaskKind = (typeof TASK_KINDS)[number];

/**
 * A housekeeping request, recognised by its UI's frame: which UI, what it asks, the conversation
 * it is about (as the frame quotes it), and the shape the UI parses the reply in.
 */
export interface ChatUiTask {
  ui: ChatUi;
  kind: TaskKind;
  /**
   * `json`: a JSON object with the UI's keys (`{"title": …}`); `text`: the bare reply (a title, an
   * emoji). A request that asks for a JSON schema or object (`response_format`) gets `json`.
   */
  reply: "json" | "text";
  /** The conversation the frame quotes, oldest first (roles `user` and `assistant`). */
  conversation: PlainMessage[];
  /**
   * Keys the UI's JSON reply carries besides the task's own: LibreChat's structured title also
   * asks for `language`, which the adapter cannot tell and leaves empty.
   */
  alsoKeys?: readonly string[];
}

/** `open-webui/title`: how a task is named in logs, metrics and the `service-chat-ui-task` header. */
export function taskName(task: Pick<ChatUiTask, "ui" | "kind">): string {
  return `${task.ui}/${task.kind}`;
}
