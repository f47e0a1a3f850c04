import type { PlainMessage } from "../core/plain-message.js";
import type { ChatUiTask, TaskKind } from "./chat-ui-task.js";
import {
  readLibreChatExchange,
  readLibreChatLegacyExchange,
  readLobeChatConversation,
  readOpenWebUiHistory,
} from "./read-conversation.js";

/**
 * Recognises a chat UI's housekeeping request by its frame, never by a keyword
 * (docs/chat-ui-tasks.md): each UI wraps the conversation it asks about in a fixed scaffold —
 * Open WebUI's `### Task:` with a `<chat_history>` block and the JSON key its parser reads,
 * LibreChat's title instruction with `Conversation:` / `||>Title:`, Lobe Chat's summariser system
 * prompt followed by the transcript. A user's own question that merely mentions a title, tags or a
 * task has none of these and is left alone (null).
 *
 * Cheap on an ordinary request: the last user message is looked at only up to a few fixed
 * prefixes (and a system message, when there is one, likewise); nothing is scanned unless a
 * prefix matched.
 */
export function recognizeChatUiTask(messages: readonly PlainMessage[]): ChatUiTask | null {
  const last = messages.at(-1);
  if (!last) return null;
  if (last.role === "user") {
    const text = withoutLeadingSpace(last.text);
    const found = openWebUiTask(text, messages) ?? libreChatTask(text) ?? lobeChatTask(text, messages);
    if (found) return found;
  }
  // LibreChat before its agents (0.7) sent its title prompt as the only message, a system one.
  if (messages.length === 1 && last.role === "system") return libreChatLegacyTitle(withoutLeadingSpace(last.text));
  return null;
}

// ---- Open WebUI -------------------------------------------------------------------------------

const TASK_FRAME = "### Task:";
/** The JSON keys Open WebUI's parsers read, and the task each belongs to (backend/open_webui/utils/middleware.py, routers/tasks.py). */
const OPEN_WEBUI_KEYS: Record<string, TaskKind> = {
  title: "title",
  tags: "tags",
  follow_ups: "follow_ups",
  queries: "queries",
  prompt: "image_prompt",
  text: "autocomplete",
};
const JSON_KEY = /"(title|tags|follow_ups|queries|prompt|text)"\s*:/g;
const OUTPUT_HEADING = /^#+\s*\**\s*output/gim;

function openWebUiTask(text: string, messages: readonly PlainMessage[]): ChatUiTask | null {
  if (text.startsWith(TASK_FRAME)) return openWebUiFramedTask(text);
  if (text.startsWith("Create a concise, 3-5 word title with an emoji as a title for the ")) return openWebUiEarlyTitle(text);
  if (text.startsWith("Your task is to reflect the speaker's likely facial expression through a fitting emoji.") && text.includes("Message: ```")) {
    return { ui: "open-webui", kind: "emoji", reply: "text", conversation: [] };
  }
  if (text.startsWith("Query: History:")) return openWebUiToolSelection(messages);
  return null;
}

/**
 * `### Task:` … `<chat_history>…</chat_history>` …: every task template since Open WebUI 0.4,
 * also as an admin rewords it. The task is the JSON key its output asks for (what Open WebUI's
 * parser reads, so a reworded template keeps it); autocompletion has `<type>` and `<text>` after
 * the history. A frame without a key Open WebUI reads is not one of its tasks.
 */
function openWebUiFramedTask(text: string): ChatUiTask | null {
  const open = text.indexOf("<chat_history>");
  const close = text.lastIndexOf("</chat_history>");
  if (open < 0 || close < open) return null;
  const frame = `${text.slice(0, open)}\n${text.slice(close)}`;
  const conversation = readOpenWebUiHistory(text.slice(open + "<chat_history>".length, close));
  const after = text.slice(close);
  if (/<type>[\s\S]*<\/type>/.test(after) && /<text>[\s\S]*<\/text>/.test(after)) {
    return { ui: "open-webui", kind: "autocomplete", reply: "json", conversation };
  }
  const kind = outputKey(frame);
  return kind ? { ui: "open-webui", kind, reply: "json", conversation } : null;
}

/** The key the template's output section asks for (after its last `### Output` heading), else the first one named. */
function outputKey(frame: string): TaskKind | null {
  let outputAt = 0;
  for (const heading of frame.matchAll(OUTPUT_HEADING)) outputAt = heading.index;
  const keys = [...frame.matchAll(JSON_KEY)];
  const chosen = keys.find((key) => key.index >= outputAt) ?? keys[0];
  return chosen ? (OPEN_WEBUI_KEYS[chosen[1] as string] ?? null) : null;
}

/**
 * Open WebUI's titles before 0.5, answered as plain text: 0.4 quotes `<chat_history>`, 0.3 the
 * first question after `Prompt: `.
 */
function openWebUiEarlyTitle(text: string): ChatUiTask | null {
  const open = text.indexOf("<chat_history>");
  const close = text.lastIndexOf("</chat_history>");
  if (open >= 0 && close > open) {
    return { ui: "open-webui", kind: "title", reply: "text", conversation: readOpenWebUiHistory(text.slice(open + "<chat_history>".length, close)) };
  }
  const prompt = /\n\s*Prompt: ([\s\S]*)$/.exec(text);
  return prompt ? { ui: "open-webui", kind: "title", reply: "text", conversation: [{ role: "user", text: (prompt[1] as string).trim() }] } : null;
}

/**
 * Open WebUI's tool choice when a model has tools but no native function calling: its tools
 * template as the system message (`Available Tools: …` asking for `"tool_calls"`), and
 * `Query: History: …` as the user's.
 */
function openWebUiToolSelection(messages: readonly PlainMessage[]): ChatUiTask | null {
  const system = messages.find((message) => message.role === "system");
  if (!system) return null;
  const text = withoutLeadingSpace(system.text);
  if (!text.startsWith("Available Tools:") || !text.includes('"tool_calls"')) return null;
  return { ui: "open-webui", kind: "tool_selection", reply: "json", conversation: [] };
}

// ---- LibreChat --------------------------------------------------------------------------------

/**
 * LibreChat's titles since its agents (0.7.8): `@librechat/agents` `createCompletionTitleRunnable`
 * (the default `titleMethod: completion`: the title as plain text) and `createTitleRunnable`
 * (`structured`: JSON with `title` and `language`), each followed by its `User: …` / `AI: …` quote.
 */
function libreChatTask(text: string): ChatUiTask | null {
  if (text.startsWith("Provide a concise, 5-word-or-less title for the conversation")) {
    const at = text.indexOf("\nConversation:\n");
    if (at < 0) return null;
    return { ui: "librechat", kind: "title", reply: "text", conversation: readLibreChatExchange(text.slice(at + "\nConversation:\n".length)) };
  }
  if (text.startsWith("Analyze this conversation and provide:") && text.includes("The detected language of the conversation")) {
    const at = text.search(/\n\s*\nUser: /);
    if (at < 0) return null;
    return { ui: "librechat", kind: "title", reply: "json", conversation: readLibreChatExchange(text.slice(at).trimStart()), alsoKeys: ["language"] };
  }
  return libreChatLegacyTitle(text);
}

/** LibreChat's older title prompt (its `OpenAIClient`): `Please generate … title …` ending in `||>Title:`. */
function libreChatLegacyTitle(text: string): ChatUiTask | null {
  if (!text.startsWith("Please generate ") || !text.trimEnd().endsWith("||>Title:") || !text.includes("||>User:")) return null;
  return { ui: "librechat", kind: "title", reply: "text", conversation: readLibreChatLegacyExchange(text) };
}

// ---- Lobe Chat --------------------------------------------------------------------------------

/** The system prompts of Lobe Chat's topic titles (`chainSummaryTitle`), by era. */
const LOBE_TITLE_SYSTEM_PROMPTS = [
  "你是一名擅长会话的助理，你需要将用户的会话总结为",
  "You are a professional conversation summarizer. Generate a concise title",
];

/**
 * Lobe Chat's topic title: its summariser system prompt, then one user message quoting the
 * conversation (`role: content` lines with a closing instruction, or a `<conversation>` block).
 */
function lobeChatTask(text: string, messages: readonly PlainMessage[]): ChatUiTask | null {
  if (messages.length !== 2 || messages[0]?.role !== "system") return null;
  const system = withoutLeadingSpace(messages[0].text);
  if (!LOBE_TITLE_SYSTEM_PROMPTS.some((prompt) => system.startsWith(prompt))) return null;
  // The Chinese prompts close the quote with their instruction (`请总结上述对话…`).
  const quoted = text.replace(/\n\s*\n\s*请总结上述对话[\s\S]*$/, "");
  return { ui: "lobe-chat", kind: "title", reply: /\bJSON\b/.test(system) ? "json" : "text", conversation: readLobeChatConversation(quoted) };
}

/** The text from its first non-space character (no copy when there is no leading space). */
function withoutLeadingSpace(text: string): string {
  const first = text.charCodeAt(0);
  return first === 32 || first === 10 || first === 13 || first === 9 ? text.trimStart() : text;
}
