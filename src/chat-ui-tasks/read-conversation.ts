import type { PlainMessage } from "../core/plain-message.js";

/**
 * How the chat UIs quote a conversation inside a housekeeping prompt (docs/chat-ui-tasks.md):
 * each turn starts a line with its role, and a turn's text runs on until the next such line.
 * These read the quotes back into messages, roles normalised to `user` and `assistant`.
 */

/** The most text kept of one quoted turn: a title needs the start of the first question only. */
const MAX_TURN_CHARS = 4000;
/** The most turns kept: the tags read the last answers, the title the first question. */
const MAX_TURNS = 50;

/** Open WebUI's `{{MESSAGES:…}}`: `USER: …` and `ASSISTANT: …` lines (its `get_messages_content`). */
export function readOpenWebUiHistory(text: string): PlainMessage[] {
  return readRoleLines(text, /^(USER|ASSISTANT|SYSTEM|TOOL): ?/gm);
}

/** LibreChat's title template (`@librechat/agents`): `User: {input}` then `AI: {output}`. */
export function readLibreChatExchange(text: string): PlainMessage[] {
  return readRoleLines(text, /^(User|AI): ?/gm);
}

/** LibreChat's older title prompt: `||>User:\n"…"\n||>Response:\n"…"` (the response JSON-quoted). */
export function readLibreChatLegacyExchange(text: string): PlainMessage[] {
  const user = /\|\|>User:\s*\n([\s\S]*?)\n\s*\|\|>Response:/.exec(text)?.[1];
  const answer = /\|\|>Response:\s*\n([\s\S]*?)\n\s*\|\|>Title:/.exec(text)?.[1];
  const messages: PlainMessage[] = [];
  if (user !== undefined) messages.push({ role: "user", text: clip(unquote(user)) });
  if (answer !== undefined) messages.push({ role: "assistant", text: clip(unquote(answer)) });
  return messages;
}

/**
 * Lobe Chat's topic prompts: `role: content` lines (before 2026), or `<user>…</user>` and
 * `<assistant>…</assistant>` blocks inside `<conversation>` (since).
 */
export function readLobeChatConversation(text: string): PlainMessage[] {
  const start = text.indexOf("<conversation>");
  if (start >= 0) {
    const messages: PlainMessage[] = [];
    const blocks = /<(user|assistant|system|tool|supervisor)>\n?([\s\S]*?)\n?<\/\1>/g;
    blocks.lastIndex = start;
    for (let match = blocks.exec(text); match && messages.length < MAX_TURNS; match = blocks.exec(text)) {
      messages.push({ role: normalRole(match[1] as string), text: clip(match[2] as string) });
    }
    return messages;
  }
  return readRoleLines(text, /^(user|assistant|system|tool|supervisor): ?/gm);
}

/** The turns of a text whose turns each start a line with `role:` (the pattern's first group). */
function readRoleLines(text: string, pattern: RegExp): PlainMessage[] {
  const starts: { role: string; at: number; textAt: number }[] = [];
  for (let match = pattern.exec(text); match && starts.length <= MAX_TURNS; match = pattern.exec(text)) {
    starts.push({ role: normalRole(match[1] as string), at: match.index, textAt: match.index + match[0].length });
  }
  return starts.slice(0, MAX_TURNS).map((start, index) => {
    const end = starts[index + 1]?.at ?? text.length;
    return { role: start.role, text: clip(unquote(text.slice(start.textAt, end).trim())) };
  });
}

function normalRole(role: string): string {
  const lower = role.toLowerCase();
  return lower === "ai" || lower === "supervisor" ? "assistant" : lower;
}

/** A turn's text without the quotes some templates wrap it in (`"…"`, `"""…"""`, a JSON string). */
function unquote(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('"""') && trimmed.endsWith('"""') && trimmed.length >= 6) return trimmed.slice(3, -3).trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    const inner = trimmed.slice(1, -1);
    // LibreChat JSON-quotes the response inside the quotes: read it back when it parses.
    if (inner.startsWith('"') && inner.endsWith('"')) {
      try {
        const parsed: unknown = JSON.parse(inner);
        if (typeof parsed === "string") return parsed;
      } catch {
        // Not JSON after all: keep it as written.
      }
    }
    return inner;
  }
  return trimmed;
}

function clip(text: string): string {
  return text.length > MAX_TURN_CHARS ? text.slice(0, MAX_TURN_CHARS) : text;
}
