import { RequestValidationError } from "../../errors/adapter-error.js";
import type { PlainMessage } from "../../core/plain-message.js";
import type { ChatMessage } from "./chat-request.js";

/** The prompt of a request and where it came from. */
export interface ExtractedPrompt {
  prompt: string;
  /** Index of the last user message in `messages`. */
  messageIndex: number;
}

/**
 * The last user message is the prompt (docs/architecture/upstream.md#the-chat-completion-resource). Array content contributes
 * its text parts in order, joined by a newline; image, audio and file parts are ignored and
 * never fetched. A request with no user message, or whose last one has no text, is a 422.
 */
export function extractPrompt(messages: readonly ChatMessage[]): ExtractedPrompt {
  const messageIndex = messages.findLastIndex((message) => message.role === "user");
  const message = messages[messageIndex];
  if (!message) {
    throw new RequestValidationError([
      {
        loc: ["body", "messages"],
        msg: "At least one message with role 'user' is required",
        type: "value_error",
      },
    ]);
  }
  const prompt = messageText(message);
  if (prompt.trim() === "") {
    throw new RequestValidationError([
      {
        loc: ["body", "messages", messageIndex, "content"],
        msg: "The last user message has no text",
        type: "value_error",
        input: message.content ?? null,
      },
    ]);
  }
  return { prompt, messageIndex };
}

/** The text of a message: its string content, or its text parts joined by newlines. */
export function messageText(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
}

/** The messages as conversations compare them: role and text (docs/architecture/continuity.md#conversations). */
export function plainMessages(messages: readonly ChatMessage[]): PlainMessage[] {
  return messages.map((message) => ({ role: message.role, text: messageText(message) }));
}
