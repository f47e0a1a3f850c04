import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcp, type McpTestClient, type Progress, REVISIONS } from "../../helpers/mcp-clients.js";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { API_KEY, FIXTURE_DOCUMENTS, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// The official SDK client of each protocol revision the adapter serves, over loopback, against
// the embedded workspace: list, call every tool, progress, follow-ups, cancellation.
let stack: Stack;
const auth = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" };
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  // As `npm start` runs it: the embedded workspace's documents served for links and `fetch`.
  let listening = "";
  stack = await startStack({ QUERY_TIMEOUT_MS: "4000" }, {}, { documents: documentReader([FIXTURE_DOCUMENTS]), publicUrl: () => listening });
  listening = stack.url;
});
afterAll(() => stack.close());

describe.each(REVISIONS)("the official SDK client on revision %s", (revision) => {
  let client: McpTestClient;
  beforeAll(async () => {
    client = await connectMcp(revision, `${stack.url}/mcp`, auth);
  });
  afterAll(() => client.close());

  it("negotiates the revision and sends it on every request after the first", () => {
    expect(client.negotiated).toBe(revision);
    const versions = client.exchanges.filter((exchange) => exchange.method === "POST").map((exchange) => exchange.headers.get("mcp-protocol-version"));
    if (revision === "2026-07-28") expect(versions.every((version) => version === revision)).toBe(true);
    else expect(versions.slice(1).every((version) => version === revision)).toBe(true);
  });

  it("lists the five read-only tools with their input and output schemas", async () => {
    const tools = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["ask", "reason", "build", "search", "fetch"]);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(tool.outputSchema).toMatchObject({ type: "object" });
    }
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", required: ["question"], properties: { question: { type: "string" } } });
  });

  it("answers with ask: Markdown with markers and a Sources list in content, the same as structuredContent", async () => {
    const result = await client.callTool("ask", { question: "How are security incidents reported?" });
    expect(result.isError).toBeFalsy();
    const text = result.content[0].text as string;
    const structured = result.structuredContent;
    expect(structured.mode).toBe("ask");
    expect(structured.answer).toContain("within one hour");
    expect(structured.answer).toMatch(/\[1\]/);
    expect(structured.answer).not.toMatch(/Sources:/);
    expect(structured.sources[0]).toMatchObject({ n: 1, filename: "security-policy.md", cited: true });
    expect(structured.steps.length).toBeGreaterThan(0);
    expect(structured.query_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(text.startsWith(structured.answer)).toBe(true);
    expect(text).toMatch(/\n\nSources:\n\[1\] security-policy\.md/);
    expect(text).toContain(`(query_id: ${structured.query_id})`);
  });

  it("answers with reason and build, each in its mode, citing the sources their markers number", async () => {
    for (const [tool, question] of [
      ["reason", "Compare the leave policy and the expense rules"],
      ["build", "Write a short onboarding note about expenses"],
    ] as const) {
      const result = await client.callTool(tool, { question });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent.mode).toBe(tool);
      expect(result.structuredContent.sources.length).toBeGreaterThan(0);
      expect(result.structuredContent.sources.map((source: { n: number }) => source.n)).toEqual(
        result.structuredContent.sources.map((_: unknown, index: number) => index + 1),
      );
      expect(result.content[0].text).toMatch(/Sources:\n\[1\] /);
    }
  });

  it("reports each workspace step as a progress notification when asked for progress", async () => {
    const progress: Progress[] = [];
    const result = await client.callTool("reason", { question: "How are security incidents reported?" }, { onprogress: (update) => progress.push(update) });
    expect(result.isError).toBeFalsy();
    expect(progress[0]?.message).toMatch(/^Asked the workspace \(reason query /);
    const messages = progress.map((update) => update.message);
    for (const step of result.structuredContent.steps) expect(messages).toContain(step);
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_, index) => index + 1));
  });

  it("continues a query with query_id: the follow-up is a new turn of the same workspace query", async () => {
    const first = await client.callTool("ask", { question: "How are security incidents reported?" });
    const queryId = first.structuredContent.query_id;
    const creates = stack.workspace.control.creates.length;
    const second = await client.callTool("ask", { question: "And who is told?", query_id: queryId });
    expect(second.isError).toBeFalsy();
    expect(second.structuredContent.query_id).toBe(queryId);
    expect(stack.workspace.control.creates.slice(creates).map((create) => create.body.id)).toEqual([queryId]);
    expect(second.structuredContent.answer).toMatch(/^Following up on/);
  });

  it("searches, then fetches a result: the whole document from the embedded workspace", async () => {
    const search = await client.callTool("search", { query: "expense receipts" });
    expect(search.isError).toBeFalsy();
    const { results } = search.structuredContent;
    expect(results.length).toBeGreaterThan(0);
    expect(JSON.parse(search.content[0].text)).toEqual({ results });
    for (const result of results) expect(Object.keys(result).sort()).toEqual(["id", "title", "url"]);
    const fetched = await client.callTool("fetch", { id: results[0].id });
    expect(fetched.isError).toBeFalsy();
    const document = fetched.structuredContent;
    expect(Object.keys(document).sort()).toEqual(["id", "metadata", "text", "title", "url"]);
    expect(document.id).toBe(results[0].id);
    expect(document.metadata).toMatchObject({ workspace: "acme", text_is: "document" });
    expect(document.text.length).toBeGreaterThan((document.metadata.snippet ?? "").length);
    expect(JSON.parse(fetched.content[0].text)).toEqual(document);
  });

  it("cancelling a call mid-query stops the upstream wait", async () => {
    const controller = new AbortController();
    const call = client.callTool("ask", { question: "leave [fault:stall]" }, { signal: controller.signal, onprogress: () => undefined });
    const failed = call.then(
      () => "answered",
      () => "cancelled",
    );
    await waitFor(() => stack.adapter.watcher.waitingQueries > 0, "the call waiting");
    expect(stack.adapter.watcher.waitingQueries).toBe(1);
    controller.abort("the user pressed stop");
    expect(await failed).toBe("cancelled");
    await waitFor(() => stack.adapter.watcher.waitingQueries === 0 && stack.adapter.watcher.activePollers === 0, "the poller to stop");
    const lists = stack.workspace.control.calls.list;
    // A quiet spell of several poll intervals (at most 50 ms each): at most the list call that was on
    // its way when the poller stopped still arrives (a busy machine delays it), and no other.
    await wait(300);
    expect(stack.workspace.control.calls.list).toBeLessThanOrEqual(lists + 1);
  });
});
