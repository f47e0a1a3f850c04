import { createOpenResponses } from "@ai-sdk/open-responses";
import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled } from "@openai/agents";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openResponsesErrors } from "../../helpers/open-responses-schemas.js";
import { API_KEY, headers, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

// The Responses API's citations (docs/citations.md#the-responses-api): url_citation by default,
// which every Responses client keeps; file_citation or none when asked, per deployment
// (RESPONSES_ANNOTATIONS) or per request (X-Responses-Annotations).

const QUESTION = "How much annual leave do I get?";
const LINK = "urn:workspace-document:acme:handbook.md";

let stack: Stack;
let fileCitations: RunningAdapter;
beforeAll(async () => {
  stack = await startStack();
  fileCitations = await startAdapter(stack.workspace.url, { RESPONSES_ANNOTATIONS: "file_citation" });
});
afterAll(async () => {
  await fileCitations.close();
  await stack.close();
});

async function annotationsOf(url: string, extra: Record<string, string> = {}) {
  const response = await fetch(`${url}/v1/responses`, { method: "POST", headers: headers(extra), body: JSON.stringify({ model: "ask", input: QUESTION }) });
  const body = (await response.json()) as Record<string, any>;
  return { status: response.status, body, annotations: body.output?.at(-1)?.content?.[0]?.annotations as Record<string, unknown>[] | undefined };
}

describe("the annotation format", () => {
  it("is url_citation by default: the source's link and title, spanning the marker", async () => {
    const { body, annotations } = await annotationsOf(stack.url);
    expect(openResponsesErrors("ResponseResource", body)).toEqual([]);
    expect(annotations?.length).toBeGreaterThan(0);
    for (const annotation of annotations ?? []) expect(Object.keys(annotation).sort()).toEqual(["end_index", "start_index", "title", "type", "url"]);
    expect(annotations?.[0]).toMatchObject({ type: "url_citation", url: LINK });
  });

  it("is file_citation or none when the request asks, and a 422 for another value", async () => {
    const files = await annotationsOf(stack.url, { "x-responses-annotations": "file_citation" });
    expect(files.annotations?.[0]).toMatchObject({ type: "file_citation", filename: "handbook.md", file_id: expect.stringMatching(/^file-/), index: expect.any(Number) });
    expect((await annotationsOf(stack.url, { "x-responses-annotations": "none" })).annotations).toEqual([]);
    const refused = await annotationsOf(stack.url, { "x-responses-annotations": "footnotes" });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(["header", "x-responses-annotations"]);
  });

  it("follows RESPONSES_ANNOTATIONS, which the request's header overrides; @ai-sdk/open-responses then keeps no citation, which is why url_citation is the default", async () => {
    expect((await annotationsOf(fileCitations.url)).annotations?.[0]).toMatchObject({ type: "file_citation" });
    expect((await annotationsOf(fileCitations.url, { "x-responses-annotations": "url_citation" })).annotations?.[0]).toMatchObject({ type: "url_citation" });
    const provider = createOpenResponses({ name: "workspace", url: `${fileCitations.url}/v1/responses`, apiKey: API_KEY, headers: { "Service-Workspace": "acme" } });
    const result = await generateText({ model: provider("ask"), prompt: QUESTION });
    expect(result.text).toContain("25 days");
    const kept = result.content.flatMap((part: any) => (part.type === "text" ? (part.providerMetadata?.workspace?.annotations ?? []) : []));
    expect(kept).toEqual([]);
  });
});

describe("every Responses client keeps the citations and the usage, with its default settings", () => {
  const workspace = { "Service-Workspace": "acme" };
  const openai = () => new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: workspace, maxRetries: 0 });

  it("the openai SDK", async () => {
    const response = await openai().responses.create({ model: "ask", input: QUESTION });
    const message = response.output.find((item) => item.type === "message");
    const part = message?.type === "message" ? message.content[0] : undefined;
    expect(part?.type === "output_text" ? part.annotations[0] : undefined).toMatchObject({ type: "url_citation", url: LINK });
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    const streamed = await openai().responses.stream({ model: "ask", input: QUESTION }).finalResponse();
    expect(streamed.usage?.output_tokens).toBeGreaterThan(0);
  });

  it("the Agents SDK", async () => {
    setTracingDisabled(true);
    const agent = new Agent({ name: "workspace", model: new OpenAIResponsesModel(openai(), "ask") });
    for (const result of [await run(agent, QUESTION), await run(agent, QUESTION, { stream: true })]) {
      if ("completed" in result) {
        for await (const _event of result.toStream());
        await result.completed;
      }
      const message = result.newItems.at(-1)?.rawItem as { content: { providerData?: { annotations?: { url: string }[] } }[] };
      expect(message.content[0]?.providerData?.annotations?.[0]?.url).toBe(LINK);
      expect(result.state.usage.inputTokens).toBeGreaterThan(0);
    }
  });

  it("@ai-sdk/openai (Responses)", async () => {
    const provider = createOpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: workspace });
    const result = await generateText({ model: provider("ask"), prompt: QUESTION });
    expect(result.sources[0]).toMatchObject({ sourceType: "url", url: LINK });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    const streamed = streamText({ model: provider("ask"), prompt: QUESTION });
    expect((await streamed.sources)[0]).toMatchObject({ sourceType: "url", url: LINK });
    expect((await streamed.usage).outputTokens).toBeGreaterThan(0);
  });

  it("@ai-sdk/open-responses", async () => {
    const provider = createOpenResponses({ name: "workspace", url: `${stack.url}/v1/responses`, apiKey: API_KEY, headers: workspace });
    const result = await generateText({ model: provider("ask"), prompt: QUESTION });
    const kept = result.content.flatMap((part: any) => (part.type === "text" ? (part.providerMetadata?.workspace?.annotations ?? []) : []));
    expect(kept[0]).toMatchObject({ type: "url_citation", url: LINK });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    const streamed = streamText({ model: provider("ask"), prompt: QUESTION });
    const ends: any[] = [];
    for await (const part of streamed.fullStream) if (part.type === "text-end") ends.push(part);
    expect(ends[0]?.providerMetadata?.workspace?.annotations?.[0]).toMatchObject({ type: "url_citation", url: LINK });
    expect((await streamed.usage).outputTokens).toBeGreaterThan(0);
  });

  it("LangChain (useResponsesApi)", async () => {
    const model = new ChatOpenAI({ model: "ask", apiKey: API_KEY, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: `${stack.url}/v1`, defaultHeaders: workspace } });
    const message = await model.invoke(QUESTION);
    const blocks = message.content as { annotations?: { url?: string }[] }[];
    expect(blocks.flatMap((block) => block.annotations ?? [])[0]).toMatchObject({ url: LINK });
    expect(message.usage_metadata?.input_tokens).toBeGreaterThan(0);
  });
});
