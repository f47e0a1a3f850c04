import { ChatPromptTemplate } from "@langchain/core/prompts";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { prompt, renderOpenWebUi, type ReplayedPrompt, replayedPrompts, type Turn } from "../../helpers/chat-ui-prompts.js";
import { openAIErrors, responsesErrors } from "../../helpers/openai-schemas.js";
import { openResponsesErrors } from "../../helpers/open-responses-schemas.js";
import { postStream } from "../../helpers/read-sse.js";
import { API_KEY, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// Chat UIs' housekeeping requests replayed from their own prompts (test/fixtures/chat-ui-prompts):
// answered by the adapter in the shape each UI parses, with no workspace query and no turn added
// to any thread, while the user's next real question continues the conversation's thread.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

/** A question the fixture documents answer, with a closing Sources list (what tags are made of). */
const QUESTION = "How much annual leave do employees get?";
const creates = () => stack.workspace.control.creates.length;

async function chat(body: Record<string, unknown>, extra: Record<string, string> = {}) {
  const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(extra), body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

/** A first real question and its answer, asked as a chat UI asks it (with its conversation header, if any). */
async function firstExchange(question: string, conversationHeader: Record<string, string>): Promise<{ turns: Turn[]; queryId: string }> {
  const { status, body, headers: responseHeaders } = await chat({ model: "ask", messages: [{ role: "user", content: question }] }, conversationHeader);
  expect(status).toBe(200);
  return { turns: [{ role: "user", content: question }, { role: "assistant", content: body.choices[0].message.content }], queryId: responseHeaders.get("service-query-id") as string };
}

/** The content of a streamed chat completion, and its chunks. */
async function streamed(body: Record<string, unknown>, extra: Record<string, string>) {
  const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(extra), { ...body, stream: true, stream_options: { include_usage: true } });
  const chunks = stream.data.filter((data) => data !== "[DONE]");
  return {
    status: stream.status,
    headers: stream.headers,
    chunks,
    done: stream.data.at(-1) === "[DONE]",
    content: chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join(""),
  };
}

/** What each UI stores from the reply: a title from the question's words, tags from its cited documents, nothing invented. */
function expectParsed(replayed: ReplayedPrompt, parsed: unknown, turns: Turn[]) {
  switch (replayed.kind) {
    case "title":
      expect(parsed, replayed.name).toBe("How much annual leave do employees");
      break;
    case "tags":
      expect(Array.isArray(parsed) && parsed.length > 0 && parsed.every((tag) => typeof tag === "string" && turns[1]?.content.includes(tag)), replayed.name).toBe(true);
      break;
    case "follow_ups":
    case "tool_selection":
      expect(parsed, replayed.name).toEqual([]);
      break;
    case "queries":
      expect(parsed, replayed.name).toEqual([turns[0]?.content]);
      break;
    case "image_prompt":
      expect(parsed, replayed.name).toBe(turns[0]?.content);
      break;
    case "autocomplete":
      expect(parsed, replayed.name).toBe("");
      break;
    case "emoji":
      expect(parsed, replayed.name).toBeNull();
      break;
    default:
      throw new Error(`no expectation for ${replayed.kind}`);
  }
}

describe("chat UIs' housekeeping, replayed from their own prompts", () => {
  for (const ui of ["open-webui", "librechat", "lobe-chat"] as const) {
    for (const withHeader of [true, false]) {
      it(`${ui}${withHeader ? ", with its conversation header" : ", without a header"}: every task answered locally as the UI parses it, streamed and not; no query, no turn; the next question continues the thread`, async () => {
        const chatId = `${ui}-chat-${withHeader ? "header" : "history"}`;
        const sample = replayedPrompts([], chatId).find((replayed) => replayed.ui === ui) as ReplayedPrompt;
        const conversationHeader = withHeader ? sample.conversationHeader : {};
        const { turns, queryId } = await firstExchange(QUESTION, conversationHeader);
        const before = creates();
        for (const replayed of replayedPrompts(turns, chatId).filter((each) => each.ui === ui)) {
          const plain = await chat({ model: "ask", messages: replayed.messages, ...replayed.extra }, conversationHeader);
          expect(plain.status, replayed.name).toBe(200);
          expect(openAIErrors("CreateChatCompletionResponse", plain.body), replayed.name).toEqual([]);
          expect(plain.headers.get("service-chat-ui-task"), replayed.name).toBe(`${ui}/${replayed.kind}`);
          expect(plain.headers.get("service-query-id"), replayed.name).toBeNull();
          expect(plain.body.usage.prompt_tokens, replayed.name).toBeGreaterThan(0);
          const content = plain.body.choices[0].message.content as string;
          expectParsed(replayed, replayed.parse(content), turns);

          const stream = await streamed({ model: "ask", messages: replayed.messages, ...replayed.extra }, conversationHeader);
          expect(stream.status, replayed.name).toBe(200);
          expect(stream.done, replayed.name).toBe(true);
          for (const chunk of stream.chunks) expect(openAIErrors("CreateChatCompletionStreamResponse", chunk), replayed.name).toEqual([]);
          expect(stream.content, replayed.name).toBe(content);
          expect(stream.chunks.at(-1).usage, replayed.name).toEqual(plain.body.usage);
        }
        expect(creates() - before).toBe(0);

        // The user's next real question continues the first question's query, with nothing in between.
        const next = await chat(
          { model: "ask", messages: [...turns, { role: "user", content: "And how are streams ended?" }] },
          conversationHeader,
        );
        expect(next.status).toBe(200);
        expect(next.headers.get("service-query-id")).toBe(queryId);
        const created = stack.workspace.control.creates.slice(before);
        expect(created).toEqual([expect.objectContaining({ body: expect.objectContaining({ id: queryId, content: "And how are streams ended?" }) })]);
      });
    }
  }

  it("answers the same prompts on the Responses API (input items), not stored, and nothing asked of the workspace", async () => {
    const { turns } = await firstExchange(QUESTION, {});
    const before = creates();
    // (LibreChat 0.7's title, a lone system message, predates the Responses API.)
    for (const replayed of replayedPrompts(turns, "responses-chat").filter((each) => each.messages.some((message) => message.role === "user"))) {
      const input = replayed.messages.map((message) => ({ type: "message", role: message.role, content: message.content }));
      const response = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", input }) });
      const body = (await response.json()) as Record<string, any>;
      expect(response.status, replayed.name).toBe(200);
      expect(responsesErrors("Response", body), replayed.name).toEqual([]);
      expect(openResponsesErrors("ResponseResource", body), replayed.name).toEqual([]);
      expect(body.store, replayed.name).toBe(false);
      expectParsed(replayed, replayed.parse(body.output_text ?? body.output.find((item: any) => item.type === "message")?.content[0].text ?? ""), turns);
      const missing = await fetch(`${stack.url}/v1/responses/${body.id}`, { headers: headers() });
      expect(missing.status).toBe(404);
    }
    expect(creates() - before).toBe(0);
  });

  it("on the Responses API, takes `instructions` as the system prompt of a frame (Lobe Chat's title with its summariser prompt there)", async () => {
    const before = creates();
    const lobe = replayedPrompts([{ role: "user", content: QUESTION }, { role: "assistant", content: "25 days." }], "lobe").find((each) => each.name === "Lobe Chat 2025 topic title") as ReplayedPrompt;
    const [system, user] = lobe.messages as unknown as [{ content: string }, { content: string }];
    const response = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", instructions: system.content, input: user.content }) });
    const body = (await response.json()) as Record<string, any>;
    expect(response.headers.get("service-chat-ui-task")).toBe("lobe-chat/title");
    expect(body.output[0].content[0].text).toBe("How much annual leave do employees");
    expect(creates() - before).toBe(0);
  });

  it("LibreChat's titles through LangChain as @librechat/agents builds them: the completion method and the structured one (json_schema)", async () => {
    const before = creates();
    const model = new ChatOpenAI({ model: "ask", apiKey: API_KEY, configuration: { baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme", "X-Conversation-Id": "lc-convo" } } });
    const convo = "User: How does the adapter cite sources?\nAI: With numbered markers [1].";
    const completion = await ChatPromptTemplate.fromTemplate(prompt("librechat/agents/title-completion.txt")).pipe(model).invoke({ convo });
    expect(String(completion.content).trim()).toBe("How does the adapter cite sources");
    const combinedSchema = z.object({ language: z.string(), title: z.string() });
    const structured = await ChatPromptTemplate.fromTemplate(prompt("librechat/agents/title-structured.txt")).pipe(model.withStructuredOutput(combinedSchema)).invoke({ convo });
    expect(structured).toEqual({ language: "", title: "How does the adapter cite sources" });
    expect(creates() - before).toBe(0);
  });

  it("with CHAT_UI_TASKS=workspace passes them on as questions (counted as such in the metrics)", async () => {
    const passing = await startStack({ CHAT_UI_TASKS: "workspace" });
    try {
      const before = passing.workspace.control.creates.length;
      const content = renderOpenWebUi(prompt("open-webui/0.6/title.txt"), [{ role: "user", content: "How does the adapter cite sources?" }]);
      const response = await fetch(`${passing.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", messages: [{ role: "user", content }] }) });
      expect(response.status).toBe(200);
      expect(response.headers.get("service-chat-ui-task")).toBeNull();
      expect(response.headers.get("service-query-id")).toBeTruthy();
      expect(passing.workspace.control.creates.length - before).toBe(1);
      const metrics = await (await fetch(`${passing.url}/metrics`)).text();
      expect(metrics).toContain('adapter_chat_ui_tasks_total{ui="open-webui",kind="title",handled="workspace"} 1');
    } finally {
      await passing.close();
    }
  });

  it("counts what it answered by UI and kind, and a forced tool call on a title is refused rather than answered in text", async () => {
    const content = renderOpenWebUi(prompt("open-webui/0.6/tags.txt"), [{ role: "user", content: "How does the adapter cite sources?" }]);
    const before = creates();
    // Whatever the mode: reason and build answer them alike, and no query is made.
    for (const model of ["ask", "reason", "acme/build"]) expect((await chat({ model, messages: [{ role: "user", content }] })).status).toBe(200);
    expect(creates() - before).toBe(0);
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toMatch(/adapter_chat_ui_tasks_total\{ui="open-webui",kind="tags",handled="local"\} [3-9]/);
    const forced = await chat({
      model: "ask",
      messages: [{ role: "user", content: prompt("librechat/agents/title-structured.txt").replace("{convo}", "User: hi\nAI: hello") }],
      tools: [{ type: "function", function: { name: "extract", parameters: { type: "object", properties: { title: { type: "string" } } } } }],
      tool_choice: { type: "function", function: { name: "extract" } },
    });
    expect(forced.status).toBe(400);
    expect(forced.body.error).toMatchObject({ type: "invalid_request_error", param: "tool_choice", code: "unsupported_value" });
    expect(creates() - before).toBe(0);
    expect(await (await fetch(`${stack.url}/metrics`)).text()).toContain('adapter_chat_ui_tasks_total{ui="librechat",kind="title",handled="workspace"} 1');
  });
});

describe("housekeeping under the key's rate limits", () => {
  it("is not counted against RATE_LIMIT_RPM (a UI's title after each answer does not halve the key's questions); the next real question is", async () => {
    const limited = await startStack({ RATE_LIMIT_RPM: "1" });
    try {
      const post = (content: string) =>
        fetch(`${limited.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", messages: [{ role: "user", content }] }) });
      const title = renderOpenWebUi(prompt("open-webui/0.6/title.txt"), [{ role: "user", content: QUESTION }]);
      const first = await post(QUESTION);
      expect(first.status).toBe(200);
      await first.text();
      for (let i = 0; i < 3; i++) {
        const housekeeping = await post(title);
        expect(housekeeping.status).toBe(200);
        expect(housekeeping.headers.get("service-chat-ui-task")).toBe("open-webui/title");
        expect(housekeeping.headers.get("x-ratelimit-remaining-requests")).toBeNull();
        await housekeeping.text();
      }
      const second = await post(QUESTION);
      expect(second.status).toBe(429);
      expect(((await second.json()) as { error: { type: string } }).error.type).toBe("rate_limit_error");
    } finally {
      await limited.close();
    }
  });
});

describe("housekeeping and bad input", () => {
  it("answers a Task frame with an empty history, a history of non-text content, an enormous history: never a 500", async () => {
    const before = creates();
    const empty = await chat({ model: "ask", messages: [{ role: "user", content: renderOpenWebUi(prompt("open-webui/0.6/title.txt"), []) }] });
    expect(empty.status).toBe(200);
    expect(JSON.parse(empty.body.choices[0].message.content)).toEqual({ title: "" });

    const parts = await chat({
      model: "ask",
      messages: [{ role: "user", content: [{ type: "text", text: renderOpenWebUi(prompt("open-webui/0.6/tags.txt"), [{ role: "user", content: "hi" }]) }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }],
    });
    expect(parts.status).toBe(200);
    expect(JSON.parse(parts.body.choices[0].message.content)).toEqual({ tags: [] });

    const long: Turn[] = Array.from({ length: 400 }, (_, index) => ({ role: index % 2 ? "assistant" : "user", content: `turn ${index} ${"word ".repeat(300)}` }));
    const enormous = await chat({ model: "ask", messages: [{ role: "user", content: renderOpenWebUi(prompt("open-webui/0.6/follow-ups.txt").replace("END:6", "END:400"), long) }] });
    expect(enormous.status).toBe(200);
    expect(JSON.parse(enormous.body.choices[0].message.content)).toEqual({ follow_ups: [] });
    expect(creates() - before).toBe(0);
  });

  it("a Task frame without a history is a question like any other (the workspace answers it)", async () => {
    const before = creates();
    const response = await chat({ model: "ask", messages: [{ role: "user", content: '### Task:\nGenerate a concise title.\n### Output:\nJSON format: { "title": "your concise title here" }' }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("service-chat-ui-task")).toBeNull();
    expect(creates() - before).toBe(1);
  });

  it("a housekeeping request whose body is invalid is refused as any request is (422), before anything else", async () => {
    const content = renderOpenWebUi(prompt("open-webui/0.6/title.txt"), []);
    const unknownModel = await chat({ model: "gpt-4o-mini", messages: [{ role: "user", content }] });
    expect(unknownModel.status).toBe(422);
    const noAuth = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "service-workspace": "acme" }, body: JSON.stringify({ model: "ask", messages: [{ role: "user", content }] }) });
    expect(noAuth.status).toBe(401);
  });
});
