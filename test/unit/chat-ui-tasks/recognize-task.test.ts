import { describe, expect, it } from "vitest";
import { recognizeChatUiTask } from "../../../src/chat-ui-tasks/recognize-task.js";
import type { PlainMessage } from "../../../src/core/plain-message.js";
import { prompt, renderOpenWebUi, replayedPrompts, type Turn } from "../../helpers/chat-ui-prompts.js";

const turns: Turn[] = [
  { role: "user", content: "How does the adapter cite sources?" },
  { role: "assistant", content: "It cites them with markers [1].\n\nSources:\n[1] README.md — The adapter's README" },
];
const plain = (messages: { role: string; content: string }[]): PlainMessage[] => messages.map((message) => ({ role: message.role, text: message.content }));

describe("recognizeChatUiTask", () => {
  it.each(replayedPrompts(turns, "chat-1").map((replayed) => [replayed.name, replayed] as const))("recognises %s by its frame", (_, replayed) => {
    const task = recognizeChatUiTask(plain(replayed.messages));
    expect(task).toMatchObject({ ui: replayed.ui, kind: replayed.kind });
    if (replayed.kind === "title") expect(task?.conversation[0]).toEqual({ role: "user", text: "How does the adapter cite sources?" });
  });

  it("reads the conversation each frame quotes, roles normalised and the answer unquoted", () => {
    for (const replayed of replayedPrompts(turns, "chat-1").filter((each) => each.kind === "title" && each.name !== "Open WebUI 0.3 title")) {
      const task = recognizeChatUiTask(plain(replayed.messages));
      expect(task?.conversation.map((message) => message.role), replayed.name).toEqual(["user", "assistant"]);
      expect(task?.conversation[1]?.text, replayed.name).toBe(turns[1]?.content);
    }
  });

  it("recognises Open WebUI templates an admin reworded, as long as the ### Task: and <chat_history> frame and the parsed key stay", () => {
    const reworded = [
      ["### Task:\nWrite a short German title for this chat.\n### Output:\nJSON: {\"title\": \"…\"}\n<chat_history>\n{{MESSAGES:END:2}}\n</chat_history>", "title"],
      ["### Task: Tag this conversation for our archive (broad topics only).\n\nReturn {\"tags\": [..]}\n\n### Chat History:\n<chat_history>\n{{MESSAGES:END:6}}\n</chat_history>", "tags"],
      ["### Task:\nPropose next questions.\n<chat_history>\n{{MESSAGES:END:6}}\n</chat_history>\n### Output:\n{ \"follow_ups\": [] }", "follow_ups"],
      ["  ### Task:\nSearch queries please.\n### Output\n{\"queries\": []}\n<chat_history>\n{{MESSAGES:END:6}}\n</chat_history>", "queries"],
    ] as const;
    for (const [template, kind] of reworded) {
      expect(recognizeChatUiTask([{ role: "user", text: renderOpenWebUi(template, turns) }])).toMatchObject({ ui: "open-webui", kind });
    }
  });

  it("takes the key of the template's output section, not the examples the history happens to hold", () => {
    const history: Turn[] = [{ role: "user", content: 'Reply with {"title": "x"} please' }];
    const text = renderOpenWebUi(prompt("open-webui/0.6/tags.txt"), history);
    expect(recognizeChatUiTask([{ role: "user", text }])?.kind).toBe("tags");
  });

  it("leaves a Task frame without a key Open WebUI parses, or without a history, to the workspace", () => {
    expect(recognizeChatUiTask([{ role: "user", text: "### Task:\nSummarise our meeting notes.\n<chat_history>\nUSER: notes\n</chat_history>" }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "user", text: '### Task:\nGenerate a concise title.\n### Output:\nJSON format: { "title": "…" }' }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "user", text: '### Task:\n</chat_history> then <chat_history>\n{ "title": "x" }' }])).toBeNull();
  });

  it("answers a frame whose history is empty (a title of nothing is an empty title, not a workspace query)", () => {
    const text = renderOpenWebUi(prompt("open-webui/0.6/title.txt"), []);
    expect(recognizeChatUiTask([{ role: "user", text }])).toMatchObject({ ui: "open-webui", kind: "title", conversation: [] });
  });

  it("bounds what it reads of an enormous history, and does so quickly", () => {
    const long: Turn[] = Array.from({ length: 2000 }, (_, index) => ({ role: index % 2 ? "assistant" : "user", content: `turn ${index} ${"word ".repeat(200)}` }));
    const text = renderOpenWebUi(prompt("open-webui/0.6/tags.txt").replace("END:6", "END:2000"), long);
    expect(text.length).toBeGreaterThan(2_000_000);
    const task = recognizeChatUiTask([{ role: "user", text }]);
    expect(task?.kind).toBe("tags");
    expect(task?.conversation.length).toBeLessThanOrEqual(50);
    expect(Math.max(...(task?.conversation ?? []).map((message) => message.text.length))).toBeLessThanOrEqual(4000);
  });

  // Questions people ask a workspace that mention titles, tags, tasks or histories: none is a UI's frame.
  const ordinary: string[][] = [
    ["What title should I give the Q3 report?"],
    ["Generate a concise, 3-5 word title for my blog post about remote work."],
    ["Suggest tags for the onboarding document."],
    ["### Task: find the leave policy"],
    ["### Task:\nSummarise the handbook.\n### Output:\nJSON format: { \"title\": \"…\" }"],
    ["Our prompt template has <chat_history> in it — how does the adapter treat it?"],
    ["Explain this Open WebUI template:\n<chat_history>\n{{MESSAGES:END:2}}\n</chat_history>\nand what { \"title\": \"\" } means"],
    ["Provide a concise summary of the conversation policy."],
    ["Provide a concise, 5-word-or-less title for the conversation policy document."],
    ["Please generate a title for the security page."],
    ["Please generate release notes ||>Title: v2"],
    ["Analyze this conversation and provide feedback on tone."],
    ["Create a concise, 3-5 word title with an emoji for my slide."],
    ["Your task is to reflect on the quarterly results."],
    ["Query: what is the refund policy?"],
    ["You are a professional conversation summarizer. What does this role mean in our team?"],
    ["follow_ups: what are the next steps after onboarding?"],
    ["How are tags and titles stored in the workspace?"],
    ["请总结上述对话为10个字以内的标题"],
    ["user: hello\nassistant: hi\nWhat is the leave policy?"],
    ["Return JSON with {\"queries\": [\"leave\"]} for the leave policy"],
  ];
  it.each(ordinary)("leaves an ordinary question alone: %s", (question) => {
    expect(recognizeChatUiTask([{ role: "user", text: question }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "system", text: "You are a helpful assistant." }, { role: "user", text: question }])).toBeNull();
    expect(
      recognizeChatUiTask([
        { role: "user", text: "How does the adapter cite sources?" },
        { role: "assistant", text: "With markers." },
        { role: "user", text: question },
      ]),
    ).toBeNull();
  });

  it("leaves a real question Open WebUI wrapped in its RAG template alone (### Task: too, but no chat history and no task key)", () => {
    // DEFAULT_RAG_TEMPLATE of open-webui/open-webui backend/open_webui/config.py @2586f1f3, as Open WebUI fills it in
    // (in the user's message or the system prompt, depending on its settings).
    const rag =
      "### Task:\nRespond to the user query using the provided context, incorporating inline citations in the format [id] **only when the <source> tag includes an explicit id attribute** (e.g., <source id=\"1\">).\n\n" +
      "### Guidelines:\n- If you don't know the answer, clearly state that.\n- Respond in the same language as the user's query.\n\n" +
      "### Output:\nProvide a clear and direct response to the user's query, including inline citations in the format [id] only when the <source> tag with id attribute is present in the context.\n\n" +
      '<context>\n<source id="1">Employees receive 25 days of paid leave. {"title": "Leave"}</source>\n</context>\n\n<user_query>\nHow much annual leave do employees get?\n</user_query>\n';
    expect(recognizeChatUiTask([{ role: "user", text: rag }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "system", text: rag }, { role: "user", text: "How much annual leave do employees get?" }])).toBeNull();
  });

  it("leaves conversations whose system prompt resembles a UI's alone when the rest is not its frame", () => {
    expect(recognizeChatUiTask([{ role: "system", text: "You are a professional conversation summarizer. Generate a concise title" }, { role: "user", text: "hi" }, { role: "assistant", text: "hello" }, { role: "user", text: "What is the leave policy?" }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "system", text: "Available Tools: none" }, { role: "user", text: "What is the leave policy?" }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "system", text: "Please generate answers politely." }])).toBeNull();
    expect(recognizeChatUiTask([{ role: "assistant", text: "### Task:\n<chat_history>\n</chat_history>\n{\"title\": \"\"}" }])).toBeNull();
    expect(recognizeChatUiTask([])).toBeNull();
  });
});
