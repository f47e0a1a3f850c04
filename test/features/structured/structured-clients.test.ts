import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool as agentTool } from "@openai/agents";
import { generateObject, generateText, Output, streamObject, streamText, tool } from "ai";
import OpenAI from "openai";
import { zodFunction, zodResponseFormat, zodResponsesFunction, zodTextFormat } from "openai/helpers/zod";
import OpenAIv6 from "openai-v6";
import {
  zodFunction as zodFunctionV6,
  zodResponseFormat as zodResponseFormatV6,
  zodResponsesFunction as zodResponsesFunctionV6,
  zodTextFormat as zodTextFormatV6,
} from "openai-v6/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

// Done when (docs/structured-answers.md): with the real clients against the adapter on loopback, each
// gets a typed object that passes its own validation, and the answer's sources are still there.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const question = "How much annual leave do employees get?";
const policy = z.object({
  summary: z.string(),
  passages: z.number().int(),
  topics: z.array(z.object({ title: z.string(), detail: z.string() })),
  kind: z.enum(["leave", "travel", "other"]),
});
type Policy = z.infer<typeof policy>;

/** A fetch that keeps the text of every response it reads (the wire, for the sources beside the JSON). */
function recordingFetch() {
  const bodies: string[] = [];
  const record: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    bodies.push(await response.clone().text());
    return response;
  };
  return { fetch: record, bodies, last: () => bodies.at(-1) ?? "" };
}

/** The sources a response body (JSON, or an SSE stream) carries beside the JSON: chat `sources` and a function call's, or Responses `url_citation` links. */
function wireSources(text: string): string[] {
  return [...text.matchAll(/"(?:filename|url)":"([^"]+)"/g)].map((match) => match[1] as string);
}

/** What every client must get: the object as its own schema says, from the workspace's passages. */
function expectPolicy(value: Policy | null | undefined) {
  expect(policy.parse(value)).toEqual(value);
  expect(value?.summary).toMatch(/\[\d+\]/);
  expect(value?.topics.length).toBeGreaterThan(0);
  expect(value?.kind).toBe("leave");
}

const settings = () => ({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });

describe.each([
  ["openai 7", OpenAI, { zodResponseFormat, zodTextFormat, zodFunction, zodResponsesFunction }],
  ["openai 6", OpenAIv6, { zodResponseFormat: zodResponseFormatV6, zodTextFormat: zodTextFormatV6, zodFunction: zodFunctionV6, zodResponsesFunction: zodResponsesFunctionV6 }],
] as const)("%s", (_name, clientClass, helpers) => {
  // Typed as the current major: the v6 alias is driven through the same calls.
  const Client = clientClass as unknown as typeof OpenAI;
  const responseFormat = helpers.zodResponseFormat as unknown as typeof zodResponseFormat;
  const textFormat = helpers.zodTextFormat as unknown as typeof zodTextFormat;
  const chatFunction = helpers.zodFunction as unknown as typeof zodFunction;
  const responsesFunction = helpers.zodResponsesFunction as unknown as typeof zodResponsesFunction;
  it("chat.completions.parse gives the typed object, with message.sources and url_citation annotations inside the JSON's strings", async () => {
    const client = new Client(settings());
    const completion = await client.chat.completions.parse({ model: "ask", messages: [{ role: "user", content: question }], response_format: responseFormat(policy, "policy") });
    const message = completion.choices[0]?.message as any;
    expectPolicy(message.parsed);
    expect(message.sources.length).toBeGreaterThan(0);
    expect(message.annotations.length).toBeGreaterThan(0);
    for (const annotation of message.annotations) {
      const marker = [...message.content].slice(annotation.url_citation.start_index, annotation.url_citation.end_index).join("");
      expect(marker).toMatch(/^\[\d+\]$/);
    }
  });

  it("chat.completions.stream gives the typed object from one content delta", async () => {
    const client = new Client(settings());
    const stream = client.chat.completions.stream({ model: "ask", messages: [{ role: "user", content: question }], response_format: responseFormat(policy, "policy") });
    let contentDeltas = 0;
    stream.on("content.delta", () => (contentDeltas += 1));
    const completion = await stream.finalChatCompletion();
    expectPolicy(completion.choices[0]?.message.parsed as Policy);
    expect(contentDeltas).toBe(1);
  });

  it("responses.parse gives the typed object, from exactly one output_text, with url_citation annotations", async () => {
    const client = new Client(settings());
    const response = await client.responses.parse({ model: "ask", input: question, text: { format: textFormat(policy, "policy") } });
    expectPolicy(response.output_parsed as Policy);
    const texts = response.output.flatMap((item: any) => (item.type === "message" ? item.content.filter((part: any) => part.type === "output_text") : []));
    expect(texts).toHaveLength(1);
    expect(texts[0].annotations.filter((annotation: any) => annotation.type === "url_citation").length).toBeGreaterThan(0);
  });

  it("responses.stream gives the typed object", async () => {
    const client = new Client(settings());
    const stream = client.responses.stream({ model: "ask", input: question, text: { format: textFormat(policy, "policy") } });
    const response = await stream.finalResponse();
    expectPolicy(response.output_parsed as Policy);
  });

  it("chat.completions.parse with a forced zodFunction gives the call's typed arguments", async () => {
    const client = new Client(settings());
    const tools = [chatFunction({ name: "record_policy", parameters: policy })];
    const completion = await client.chat.completions.parse({ model: "ask", messages: [{ role: "user", content: question }], tools, tool_choice: { type: "function", function: { name: "record_policy" } } });
    const [call] = completion.choices[0]?.message.tool_calls ?? [];
    expectPolicy((call as any)?.function.parsed_arguments as Policy);
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it.each([false, true])("responses.parse with a forced zodResponsesFunction gives one function_call with typed arguments and its sources (streamed: %s)", async (streamed) => {
    const client = new Client(settings());
    const body = { model: "ask", input: question, tools: [responsesFunction({ name: "record_policy", parameters: policy })], tool_choice: "required" as const };
    const response = streamed ? await client.responses.stream(body).finalResponse() : await client.responses.parse(body);
    const calls = response.output.filter((item: any) => item.type === "function_call") as any[];
    expect(calls).toHaveLength(1);
    expectPolicy(calls[0].parsed_arguments as Policy);
    expect(calls[0].sources.length).toBeGreaterThan(0);
    expect(response.output_text).toBe("");
  });
});

describe("the Agents SDK", () => {
  it.each([false, true])("run with outputType gives the typed final output (streamed: %s)", async (stream) => {
    const wire = recordingFetch();
    const client = new OpenAI({ ...settings(), fetch: wire.fetch });
    setTracingDisabled(true);
    // Its own model over its own client (a default client is kept by the SDK once a run used it).
    const agent = new Agent({ name: "Policies", model: new OpenAIResponsesModel(client, "ask"), outputType: policy });
    const result = stream ? await run(agent, question, { stream: true }) : await run(agent, question);
    if (stream && "completed" in result) {
      for await (const _event of result.toStream()) {
        // drained
      }
      await result.completed;
    }
    expectPolicy(result.finalOutput as Policy);
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });

  it.each([false, true])("run with a forced tool calls it with the typed arguments, its output the final output (streamed: %s)", async (stream) => {
    const wire = recordingFetch();
    const client = new OpenAI({ ...settings(), fetch: wire.fetch });
    setTracingDisabled(true);
    const called: Policy[] = [];
    const record = agentTool({
      name: "record_policy",
      description: "Record the policy",
      parameters: policy,
      execute: (input) => {
        called.push(input);
        return "recorded";
      },
    });
    const agent = new Agent({
      name: "Policies",
      model: new OpenAIResponsesModel(client, "ask"),
      tools: [record],
      modelSettings: { toolChoice: "record_policy" },
      toolUseBehavior: "stop_on_first_tool",
    });
    const result = stream ? await run(agent, question, { stream: true }) : await run(agent, question);
    if (stream && "completed" in result) {
      for await (const _event of result.toStream()) {
        // drained
      }
      await result.completed;
    }
    expect(called).toHaveLength(1);
    expectPolicy(called[0]);
    expect(result.finalOutput).toBe("recorded");
    // One request: the tool's call ended the run, so the workspace never saw the tool's result.
    expect(wire.bodies).toHaveLength(1);
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });
});

/** The AI SDK's models over the adapter, through each provider, and the wire they share. */
function providers() {
  const wire = recordingFetch();
  const common = { baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: { "Service-Workspace": "acme" }, fetch: wire.fetch };
  const openai = createOpenAI(common);
  const compatible = createOpenAICompatible({ name: "workspace", ...common, supportsStructuredOutputs: true });
  return { wire, models: { "@ai-sdk/openai chat": openai.chat("ask"), "@ai-sdk/openai Responses": openai("ask"), "@ai-sdk/openai-compatible": compatible("ask") } };
}

describe("the AI SDK", () => {

  it.each(["@ai-sdk/openai chat", "@ai-sdk/openai Responses", "@ai-sdk/openai-compatible"] as const)("generateObject through %s gives the typed object", async (name) => {
    const { wire, models } = providers();
    const result = await generateObject({ model: models[name], schema: policy, prompt: question, maxRetries: 0 });
    expectPolicy(result.object);
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });

  it.each(["@ai-sdk/openai chat", "@ai-sdk/openai Responses", "@ai-sdk/openai-compatible"] as const)("generateText with Output.object through %s gives the typed object", async (name) => {
    const { wire, models } = providers();
    const result = await generateText({ model: models[name], output: Output.object({ schema: policy }), prompt: question, maxRetries: 0 });
    expectPolicy(result.output);
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });

  it.each(["@ai-sdk/openai chat", "@ai-sdk/openai Responses", "@ai-sdk/openai-compatible"] as const)("streamObject through %s gives the whole object at once", async (name) => {
    const { wire, models } = providers();
    const result = streamObject({ model: models[name], schema: policy, prompt: question, maxRetries: 0 });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expectPolicy(await result.object);
    expect(partials).toHaveLength(1);
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });
});

describe("the AI SDK with a forced tool", () => {
  const tools = { record_policy: tool({ description: "Record the policy", inputSchema: policy }) };
  const toolChoice = { type: "tool", toolName: "record_policy" } as const;

  it.each(["@ai-sdk/openai chat", "@ai-sdk/openai Responses", "@ai-sdk/openai-compatible"] as const)("generateText through %s gives the call with typed input", async (name) => {
    const { wire, models: byName } = providers();
    const result = await generateText({ model: byName[name], tools, toolChoice, prompt: question, maxRetries: 0 });
    expect(result.toolCalls).toHaveLength(1);
    expectPolicy(result.toolCalls[0]?.input as Policy);
    expect(result.finishReason).toBe("tool-calls");
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });

  it.each(["@ai-sdk/openai chat", "@ai-sdk/openai Responses"] as const)("streamText through %s gives the call with typed input", async (name) => {
    const { models: byName } = providers();
    const result = streamText({ model: byName[name], tools, toolChoice, prompt: question, maxRetries: 0 });
    const calls = await result.toolCalls;
    expect(calls).toHaveLength(1);
    expectPolicy(calls[0]?.input as Policy);
  });
});

describe("LangChain", () => {
  it.each(["jsonSchema", "functionCalling"] as const)("withStructuredOutput (%s) gives the typed object, the raw message keeping the sources", async (method) => {
    const wire = recordingFetch();
    const model = new ChatOpenAI({ model: "ask", apiKey: API_KEY, maxRetries: 0, configuration: { baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme" }, fetch: wire.fetch } });
    const structured = method === "jsonSchema" ? model.withStructuredOutput(policy, { name: "policy", includeRaw: true }) : model.withStructuredOutput(policy, { name: "policy", method, includeRaw: true });
    const result = await structured.invoke(question);
    expectPolicy(result.parsed as Policy);
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });

  it.each(["jsonSchema", "functionCalling"] as const)("withStructuredOutput (%s) over the Responses API gives the typed object", async (method) => {
    const wire = recordingFetch();
    const model = new ChatOpenAI({ model: "ask", apiKey: API_KEY, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme" }, fetch: wire.fetch } });
    const result = await model.withStructuredOutput(policy, { name: "policy", method, includeRaw: true }).invoke(question);
    expectPolicy(result.parsed as Policy);
    expect(wire.last()).toContain('"object":"response"');
    expect(wireSources(wire.last()).length).toBeGreaterThan(0);
  });

  it("withStructuredOutput streams the object", async () => {
    const model = new ChatOpenAI({ model: "ask", apiKey: API_KEY, maxRetries: 0, streaming: true, configuration: { baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme" } } });
    const chunks: unknown[] = [];
    for await (const chunk of await model.withStructuredOutput(policy, { name: "policy" }).stream(question)) chunks.push(chunk);
    expectPolicy(chunks.at(-1) as Policy);
  });
});
