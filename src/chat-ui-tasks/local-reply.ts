import { parseReferences } from "../answer/parse-references.js";
import type { PlainMessage } from "../core/plain-message.js";
import type { ChatUiTask } from "./chat-ui-task.js";
import { shortTitle } from "./short-title.js";

/** Most tags given: Open WebUI asks for one to three broad ones. */
const MAX_TAGS = 3;

/**
 * The adapter's own reply to a housekeeping request, in the shape its UI parses
 * (docs/chat-ui-tasks.md). Honest, and made from the conversation the frame quotes, never from the
 * workspace: a title is the first question's own words; tags are the documents the conversation's
 * answers cited (none when they cited none); follow-ups and autocompletions are left empty; the
 * search queries for the UI's own retrieval and an image prompt are the user's last question; no
 * emoji, and none of the UI's tools is chosen.
 */
export function localReply(task: ChatUiTask, asJson: boolean): string {
  const json = asJson || task.reply === "json";
  const { conversation } = task;
  switch (task.kind) {
    case "title": {
      const title = shortTitle(firstOf(conversation, "user"));
      if (!json) return title;
      return JSON.stringify({ title, ...Object.fromEntries((task.alsoKeys ?? []).map((key) => [key, ""])) });
    }
    case "tags": {
      const tags = citedDocuments(conversation);
      return json ? JSON.stringify({ tags }) : tags.join(", ");
    }
    case "follow_ups":
      return json ? JSON.stringify({ follow_ups: [] }) : "";
    case "queries": {
      const question = lastOf(conversation, "user").trim();
      return JSON.stringify({ queries: question ? [question] : [] });
    }
    case "autocomplete":
      return JSON.stringify({ text: "" });
    case "image_prompt":
      return JSON.stringify({ prompt: lastOf(conversation, "user").trim() });
    case "emoji":
      return "";
    case "tool_selection":
      return JSON.stringify({ tool_calls: [] });
  }
}

function firstOf(conversation: readonly PlainMessage[], role: string): string {
  return conversation.find((message) => message.role === role)?.text ?? "";
}

function lastOf(conversation: readonly PlainMessage[], role: string): string {
  return conversation.findLast((message) => message.role === role)?.text ?? "";
}

/**
 * The documents the conversation's answers list as their sources (a closing `Sources:` section,
 * as the workspace writes it or as the adapter's Markdown citations do), newest answers first:
 * their titles, else their file names without the extension.
 */
function citedDocuments(conversation: readonly PlainMessage[]): string[] {
  const tags: string[] = [];
  const seen = new Set<string>();
  for (const message of conversation.toReversed()) {
    if (message.role !== "assistant") continue;
    for (const entry of parseReferences(message.text)?.entries ?? []) {
      const name = documentName(entry.source.title ?? "") || documentName(entry.source.filename ?? "");
      if (!name || seen.has(name.toLowerCase())) continue;
      seen.add(name.toLowerCase());
      tags.push(name);
      if (tags.length === MAX_TAGS) return tags;
    }
  }
  return tags;
}

/** A document's name as a tag: the title after any `file, p. N — ` locator, a file name without folders or extension. */
function documentName(text: string): string {
  const named = text.split(/\s+[—–]\s+/).at(-1)?.trim() ?? "";
  return named.split("/").at(-1)?.replace(/\.[A-Za-z][A-Za-z0-9]{0,7}(?:#.*)?$/, "").trim() ?? "";
}
