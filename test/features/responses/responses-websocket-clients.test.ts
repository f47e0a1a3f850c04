import * as agents20 from "@openai/agents";
import OpenAI from "openai";
import OpenAIv6 from "openai-v6";
import { ResponsesWS as ResponsesWSv6 } from "openai-v6/resources/responses/ws";
import { ResponsesWS } from "openai/resources/responses/ws";
import * as agents19 from "openai-agents-v0.19";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { openResponsesErrors } from "../../helpers/open-responses-schemas.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { ResponseSocket, responseOf } from "../../helpers/response-socket.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

// The real clients of the Responses API's WebSocket mode (docs/responses-api.md#websocket-mode): the
// openai SDK's `ResponsesWS` at each major the repository runs (7, and 6, which has it too), and the
// Agents SDK's default loop with `useResponsesWebSocket` (0.20 and 0.19), keeping the answer's
// citations and usage; and a continuation across two replicas sharing a real Redis.

const QUESTION = "How much annual leave do I get?";
const LINK = "urn:workspace-document:acme:handbook.md";
const WORKSPACE = { "service-workspace": "acme" };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

/** The answers given to messages on a WebSocket, and to POST /v1/responses (a socket's upgrade, 101, apart), as the adapter counts them. */
async function answered(): Promise<{ socket: number; post: number }> {
  const metric = await stack.adapter.metrics.requests.get();
  const sum = (route: string) =>
    metric.values.filter((value) => value.labels.route === route && value.labels.status !== "101").reduce((total, value) => total + value.value, 0);
  return { socket: sum("/v1/responses (websocket)"), post: sum("/v1/responses") };
}

/** One response through an openai SDK's `ResponsesWS`: the events it emitted, up to `response.completed`. */
async function overResponsesWS(client: InstanceType<typeof ResponsesWS> | InstanceType<typeof ResponsesWSv6>, body: Record<string, unknown>) {
  // Both majors' emitters, as one (their event maps differ only in types this test does not read).
  const socket = client as unknown as {
    on(event: string, listener: (event: any) => void): void;
    off(event: string, listener: (event: any) => void): void;
    once(event: string, listener: (error: unknown) => void): void;
    send(event: unknown): void;
  };
  const types: string[] = [];
  const completed = new Promise<any>((resolve, reject) => {
    const onEvent = (event: { type: string; response?: unknown }) => {
      types.push(event.type);
      if (event.type === "response.completed") {
        socket.off("event", onEvent);
        resolve(event.response);
      }
    };
    socket.on("event", onEvent);
    socket.once("error", reject);
  });
  socket.send({ type: "response.create", ...body });
  return { response: await completed, types };
}

describe("the openai SDK's ResponsesWS", () => {
  const majors = [
    ["7", () => new ResponsesWS(new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY }), { headers: WORKSPACE })],
    ["6", () => new ResponsesWSv6(new OpenAIv6({ baseURL: `${stack.url}/v1`, apiKey: API_KEY }), { headers: WORKSPACE })],
  ] as const;
  for (const [major, open] of majors) {
    it(`at major ${major}: a response with its citations and usage, then its continuation on the same socket (store: false)`, async () => {
      const socket = open();
      const answeredBefore = await answered();
      try {
        const first = await overResponsesWS(socket, { model: "ask", input: QUESTION, store: false });
        expect(first.types[0]).toBe("response.created");
        const message = first.response.output.find((item: { type: string }) => item.type === "message");
        expect(message.content[0].annotations[0]).toMatchObject({ type: "url_citation", url: LINK });
        expect(first.response.usage.input_tokens).toBeGreaterThan(0);
        expect(openResponsesErrors("ResponseResource", first.response)).toEqual([]);
        const second = await overResponsesWS(socket, { model: "ask", input: "Does it carry over?", store: false, previous_response_id: first.response.id });
        expect(second.response).toMatchObject({ status: "completed", previous_response_id: first.response.id });
        expect((await answered()).socket - answeredBefore.socket).toBe(2);
      } finally {
        socket.close({ code: 1000, reason: "done" });
      }
    });
  }
});

describe("the Agents SDK with useResponsesWebSocket, its default loop", () => {
  const versions = [
    ["0.20", agents20],
    ["0.19", agents19 as unknown as typeof agents20],
  ] as const;
  for (const [version, sdk] of versions) {
    it(`at ${version}: two turns over one socket, each keeping its citations and usage`, async () => {
      sdk.setTracingDisabled(true);
      const client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: WORKSPACE, maxRetries: 0 });
      const provider = new sdk.OpenAIProvider({ openAIClient: client, useResponses: true, useResponsesWebSocket: true });
      const runner = new sdk.Runner({ modelProvider: provider });
      const agent = new sdk.Agent({ name: "workspace", model: "ask" });
      const createsBefore = stack.workspace.control.creates.length;
      const answeredBefore = await answered();
      try {
        const first = await runner.run(agent, QUESTION);
        const second = await runner.run(agent, [...first.history, { role: "user", content: "Does it carry over?" }] as never);
        for (const result of [first, second]) {
          const message = result.newItems.at(-1)?.rawItem as { content: { providerData?: { annotations?: { url: string }[] } }[] };
          expect(message.content[0]?.providerData?.annotations?.[0]?.url).toBe(LINK);
          expect(result.state.usage.inputTokens).toBeGreaterThan(0);
          expect(result.finalOutput).toEqual(expect.stringContaining("25"));
        }
        expect(stack.workspace.control.creates.length - createsBefore).toBe(2);
        // Both over the socket, none over HTTP.
        const answeredAfter = await answered();
        expect(answeredAfter.socket - answeredBefore.socket).toBe(2);
        expect(answeredAfter.post - answeredBefore.post).toBe(0);
      } finally {
        await provider.close();
      }
    });
  }
});

describeWith(REDIS, "a WebSocket continuation across two replicas sharing Redis", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let replicas: RunningAdapter[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 10 });
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `websocket-test-${process.pid}:` };
    replicas = await Promise.all([0, 1].map(() => startAdapter(workspace.url, environment)));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await workspace?.close();
    await redis?.stop();
  });

  it("continues on the other replica's socket a stored response made on one's: the same workspace query; a store: false one stays on its socket", async () => {
    const [one, other] = replicas as [RunningAdapter, RunningAdapter];
    const before = workspace.control.creates.length;
    const first = await ResponseSocket.open(one.url);
    const made = responseOf(await first.turn({ model: "ask", input: QUESTION }));
    const unstored = responseOf(await first.turn({ model: "ask", input: "Who approves it?", store: false }));
    first.close();
    const second = await ResponseSocket.open(other.url);
    const continued = responseOf(await second.turn({ model: "ask", input: "Does it carry over?", previous_response_id: made.id }));
    expect(continued).toMatchObject({ status: "completed", previous_response_id: made.id });
    const creates = workspace.control.creates.slice(before).map((entry) => (entry.body as { id: string }).id);
    expect(creates[2]).toBe(creates[0]);
    const [missing] = await second.turn({ model: "ask", input: "And then?", store: false, previous_response_id: unstored.id });
    expect(missing).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
    second.close();
  });
});
