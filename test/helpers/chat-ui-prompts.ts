import { readFileSync } from "node:fs";

// The chat UIs' housekeeping requests as each UI builds them from its vendored prompt
// (test/fixtures/chat-ui-prompts, README there says where each comes from), and each reply read
// back as the UI parses it.

/** One message of a conversation, as a chat UI holds it. */
export interface Turn {
  role: "user" | "assistant";
  content: string;
}

/** A housekeeping request as a UI sends it, and how that UI reads the reply. */
export interface ReplayedPrompt {
  name: string;
  ui: "open-webui" | "librechat" | "lobe-chat";
  kind: string;
  /** The request body's messages. */
  messages: { role: string; content: string }[];
  /** Extra body fields the UI sends (`max_tokens`, `response_format`…). */
  extra?: Record<string, unknown>;
  /** The conversation-id header the UI sends with it, when configured to. */
  conversationHeader: Record<string, string>;
  /** The reply as the UI reads it: what it stores as the title, the tags… */
  parse(content: string): unknown;
}

/** A vendored prompt's text. */
export function prompt(path: string): string {
  return readFileSync(new URL(`../fixtures/chat-ui-prompts/${path}`, import.meta.url), "utf8");
}

/** Open WebUI's `get_messages_content`: `ROLE: text` lines. */
function openWebUiMessages(turns: readonly Turn[]): string {
  return turns.map((turn) => `${turn.role.toUpperCase()}: ${turn.content}`).join("\n");
}

/**
 * Open WebUI's template rendering (`utils/task.py`): `{{MESSAGES:END:n}}` the last n turns,
 * `{{prompt…}}` the last question, `{{CURRENT_DATE}}`, and autocompletion's `{{TYPE}}` and `{{PROMPT}}`.
 */
export function renderOpenWebUi(template: string, turns: readonly Turn[], fill: { type?: string; typed?: string } = {}): string {
  const lastQuestion = turns.findLast((turn) => turn.role === "user")?.content ?? "";
  return template
    .replace(/\{\{MESSAGES:END:(\d+)\}\}/g, (_, count: string) => openWebUiMessages(turns.slice(-Number(count))))
    .replace(/\{\{prompt(?::[a-z]+:\d+)?\}\}/g, lastQuestion)
    .replace("{{CURRENT_DATE}}", "2026-11-24")
    .replace("{{TYPE}}", fill.type ?? "General")
    .replace("{{PROMPT}}", fill.typed ?? "")
    .replace("{{TOOLS}}", '[{"name": "get_weather", "description": "Current weather", "parameters": {"city": "string"}}]');
}

/** Open WebUI's JSON parsing of a task reply: from the first `{` to the last `}`. */
export function openWebUiJson(content: string): Record<string, unknown> {
  return JSON.parse(content.slice(content.indexOf("{"), content.lastIndexOf("}") + 1)) as Record<string, unknown>;
}

/** Open WebUI's emoji parsing (`generateEmoji` in its frontend): the first pictograph, or null. */
function openWebUiEmoji(content: string): string | null {
  const cleaned = content.replace(/["']/g, "");
  return /\p{Extended_Pictographic}/u.exec(cleaned)?.[0] ?? null;
}

/**
 * Every housekeeping request the adapter answers itself, built from the vendored prompts over the
 * given conversation (a first question and its answer, as the UIs send titles after the first
 * answer).
 */
export function replayedPrompts(turns: readonly Turn[], chatId: string): ReplayedPrompt[] {
  const openWebUiHeader = { "x-openwebui-chat-id": chatId };
  const libreChatHeader = { "x-conversation-id": chatId };
  const user = (content: string) => [{ role: "user", content }];
  const jsonKey = (key: string) => (content: string) => openWebUiJson(content)[key];
  const openWebUi = (name: string, file: string, kind: string, parse: (content: string) => unknown, extra?: Record<string, unknown>, fill?: { type?: string; typed?: string }) =>
    ({ name, ui: "open-webui", kind, messages: user(renderOpenWebUi(prompt(file), turns, fill)), extra: { stream: false, ...extra }, conversationHeader: openWebUiHeader, parse }) as const;
  const libreChatConvo = prompt("librechat/agents/convo.txt").replace("{input}", turns[0]?.content ?? "").replace("{output}", turns[1]?.content ?? "");
  const legacyConvo = prompt("librechat/0.7/convo.txt").replace("{text}", turns[0]?.content ?? "").replace("{responseTextAsJson}", JSON.stringify(turns[1]?.content ?? ""));
  const lobeTranscript = turns.map((turn) => `${turn.role}: ${turn.content}`).join("\n");
  const lobeBlocks = turns.map((turn) => `<${turn.role}>\n${turn.content}\n</${turn.role}>`).join("\n");
  return [
    openWebUi("Open WebUI (newest) title", "open-webui/latest/title.txt", "title", jsonKey("title"), { max_tokens: 1000 }),
    openWebUi("Open WebUI (newest) follow-ups", "open-webui/latest/follow-ups.txt", "follow_ups", jsonKey("follow_ups")),
    openWebUi("Open WebUI 0.6 title", "open-webui/0.6/title.txt", "title", jsonKey("title"), { max_tokens: 1000 }),
    openWebUi("Open WebUI 0.6 tags", "open-webui/0.6/tags.txt", "tags", jsonKey("tags")),
    openWebUi("Open WebUI 0.6 follow-ups", "open-webui/0.6/follow-ups.txt", "follow_ups", jsonKey("follow_ups")),
    openWebUi("Open WebUI 0.6 retrieval queries", "open-webui/0.6/queries.txt", "queries", jsonKey("queries")),
    openWebUi("Open WebUI 0.6 autocomplete", "open-webui/0.6/autocomplete.txt", "autocomplete", jsonKey("text"), {}, { type: "General", typed: "How do I" }),
    openWebUi("Open WebUI 0.6 image prompt", "open-webui/0.6/image-prompt.txt", "image_prompt", jsonKey("prompt")),
    openWebUi("Open WebUI 0.6 emoji", "open-webui/0.6/emoji.txt", "emoji", openWebUiEmoji, { max_tokens: 4 }),
    openWebUi("Open WebUI 0.5 title", "open-webui/0.5/title.txt", "title", jsonKey("title"), { max_tokens: 1000 }),
    openWebUi("Open WebUI 0.4 title", "open-webui/0.4/title.txt", "title", (content) => content, { max_tokens: 50 }),
    openWebUi("Open WebUI 0.4 queries", "open-webui/0.4/queries.txt", "queries", jsonKey("queries")),
    openWebUi("Open WebUI 0.3 title", "open-webui/0.3/title.txt", "title", (content) => content, { max_tokens: 50 }),
    {
      name: "Open WebUI 0.6 tool selection",
      ui: "open-webui",
      kind: "tool_selection",
      messages: [
        { role: "system", content: renderOpenWebUi(prompt("open-webui/0.6/tools.txt"), turns) },
        { role: "user", content: `Query: History:\n${turns.map((turn) => `${turn.role.toUpperCase()}: """${turn.content}"""`).join("\n")}\nQuery: ${turns.findLast((turn) => turn.role === "user")?.content ?? ""}` },
      ],
      extra: { stream: false },
      conversationHeader: openWebUiHeader,
      parse: jsonKey("tool_calls"),
    },
    {
      name: "LibreChat (agents) title, titleMethod completion",
      ui: "librechat",
      kind: "title",
      messages: user(prompt("librechat/agents/title-completion.txt").replace("{convo}", libreChatConvo)),
      conversationHeader: libreChatHeader,
      parse: (content) => content.trim(),
    },
    {
      name: "LibreChat (agents) title, titleMethod structured",
      ui: "librechat",
      kind: "title",
      messages: user(prompt("librechat/agents/title-structured.txt").replace("{convo}", libreChatConvo)),
      extra: {
        response_format: {
          type: "json_schema",
          json_schema: { name: "extract", schema: { type: "object", properties: { language: { type: "string" }, title: { type: "string" } }, required: ["language", "title"] } },
        },
      },
      conversationHeader: libreChatHeader,
      parse: (content) => (JSON.parse(content) as { title: string }).title,
    },
    {
      name: "LibreChat 0.7 title (one system message)",
      ui: "librechat",
      kind: "title",
      messages: [
        {
          role: "system",
          content: prompt("librechat/0.7/title.txt").replace("{titleInstruction}", prompt("librechat/0.7/title-instruction.txt")).replace("{convo}", legacyConvo),
        },
      ],
      extra: { temperature: 0.2, presence_penalty: 0, frequency_penalty: 0, max_tokens: 16 },
      conversationHeader: libreChatHeader,
      parse: (content) => content.replaceAll('"', ""),
    },
    ...(["2024", "2025", "2026"] as const).map((era) => ({
      name: `Lobe Chat ${era} topic title`,
      ui: "lobe-chat" as const,
      kind: "title",
      messages: [
        { role: "system", content: prompt(`lobe-chat/${era}/title-system.txt`).replace("{locale}", "en-US") },
        {
          role: "user",
          content: prompt(`lobe-chat/${era}/title-user.txt`).replace("{transcript}", lobeTranscript).replace("{conversation}", lobeBlocks).replace("{locale}", "en-US"),
        },
      ],
      extra: era === "2026" ? { response_format: { type: "json_schema", json_schema: { name: "topic_title", strict: true, schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false } } } } : {},
      conversationHeader: {},
      parse: era === "2026" ? (content: string) => (JSON.parse(content) as { title: string }).title : (content: string) => content,
    })),
  ];
}
