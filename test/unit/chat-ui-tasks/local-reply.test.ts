import { describe, expect, it } from "vitest";
import type { ChatUiTask } from "../../../src/chat-ui-tasks/chat-ui-task.js";
import { localReply } from "../../../src/chat-ui-tasks/local-reply.js";
import { shortTitle } from "../../../src/chat-ui-tasks/short-title.js";

const conversation = [
  { role: "user", text: "How many days of annual leave do employees get?" },
  { role: "assistant", text: "25 days [1], carried over up to 5 [2].\n\nSources:\n[1] handbook.pdf, p. 4 — Employee handbook\n[2] leave-policy.md" },
  { role: "user", text: "And for part-time staff?" },
  { role: "assistant", text: "Pro rata [1].\n\n**Sources**\n- [handbook.pdf, p. 5 — Employee handbook](http://x/documents/acme/handbook.pdf#page=5)\n- [travel.md](http://x/documents/acme/travel.md)" },
];
const task = (kind: ChatUiTask["kind"], reply: ChatUiTask["reply"] = "json", extra: Partial<ChatUiTask> = {}): ChatUiTask => ({ ui: "open-webui", kind, reply, conversation, ...extra });

describe("localReply", () => {
  it("titles a conversation with its first question's own words", () => {
    expect(JSON.parse(localReply(task("title"), false))).toEqual({ title: "How many days of annual leave" });
    expect(localReply(task("title", "text"), false)).toBe("How many days of annual leave");
    expect(localReply(task("title", "text"), true)).toBe('{"title":"How many days of annual leave"}');
    expect(JSON.parse(localReply(task("title", "json", { alsoKeys: ["language"] }), false))).toEqual({ title: "How many days of annual leave", language: "" });
  });

  it("tags a conversation with the documents its answers cited, newest first, never an invented topic", () => {
    expect(JSON.parse(localReply(task("tags"), false))).toEqual({ tags: ["Employee handbook", "travel", "leave-policy"] });
    expect(JSON.parse(localReply(task("tags", "json", { conversation: conversation.slice(0, 1) }), false))).toEqual({ tags: [] });
  });

  it("suggests no follow-ups, completes nothing, picks no tool and no emoji", () => {
    expect(JSON.parse(localReply(task("follow_ups"), false))).toEqual({ follow_ups: [] });
    expect(JSON.parse(localReply(task("autocomplete"), false))).toEqual({ text: "" });
    expect(JSON.parse(localReply(task("tool_selection"), false))).toEqual({ tool_calls: [] });
    expect(localReply(task("emoji", "text"), false)).toBe("");
  });

  it("searches for, and pictures, the user's last question in their own words", () => {
    expect(JSON.parse(localReply(task("queries"), false))).toEqual({ queries: ["And for part-time staff?"] });
    expect(JSON.parse(localReply(task("image_prompt"), false))).toEqual({ prompt: "And for part-time staff?" });
    expect(JSON.parse(localReply(task("queries", "json", { conversation: [] }), false))).toEqual({ queries: [] });
  });
});

describe("shortTitle", () => {
  it.each([
    ["How does the adapter cite sources?", "How does the adapter cite sources"],
    ["how are streams ended when the adapter shuts down and what happens to open queries?", "How are streams ended when the"],
    ["  **Leave** policy for `part-time` staff.\nMore details below.", "Leave policy for part-time staff"],
    ["Compare [the handbook](http://x/handbook.pdf) with https://example.com/policy please", "Compare the handbook with please"],
    ["```js\nconsole.log(1)\n```\nWhy does this fail?", "Why does this fail"],
    ["年假政策是什么？我想知道细节。", "年假政策是什么"],
    ["«Quelle est la politique de congés ?»", "Quelle est la politique de congés"],
    ["Hi.", "Hi"],
    ["", ""],
    ["   \n ", ""],
    ["a".repeat(200), `A${"a".repeat(49)}`],
    ["😀 What about emoji?", "😀 What about emoji"],
  ])("%j → %j", (question, title) => {
    expect(shortTitle(question)).toBe(title);
  });

  it("never cuts a character in half", () => {
    const title = shortTitle("🎉".repeat(40));
    expect([...title].every((character) => character === "🎉")).toBe(true);
  });
});
