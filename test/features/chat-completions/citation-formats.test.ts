import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { startBrowser } from "../../helpers/browser.js";
import { CHROMIUM, describeWith } from "../../helpers/external-programs.js";
import { openAIErrors, strictOpenAIErrors } from "../../helpers/openai-schemas.js";
import { postStream } from "../../helpers/read-sse.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

// The fixture handbook cites itself by name: "[handbook.md]" markers are name markers.
const QUESTION = "How much annual leave do employees get?";

async function complete(url: string, extraHeaders: Record<string, string>, body = chatBody(QUESTION, { model: "reason" })) {
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: headers(extraHeaders), body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

const spanned = (content: string, start: number, end: number) => [...content].slice(start, end).join("");

describe("annotation formats", () => {
  it("sends OpenAI's url_citation over each marker by default, and the whole answer validates unmodified", async () => {
    const { body } = await complete(stack.url, {});
    expect(strictOpenAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
    const { content, annotations } = body.choices[0].message;
    expect(annotations.length).toBeGreaterThan(0);
    for (const { type, url_citation: citation } of annotations) {
      expect(type).toBe("url_citation");
      // `reason` answers cite by name (`[handbook.md]`) and sum up with numbers (`[1, 2]`).
      expect(spanned(content, citation.start_index, citation.end_index)).toMatch(/^\[(handbook\.md|\d+(, \d+)*)\]$/);
      expect(citation.url).toMatch(/^urn:workspace-document:acme:handbook\.md/);
      expect(citation.title.length).toBeGreaterThan(0);
    }
    const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(), chatBody(QUESTION, { stream: true, stream_options: { include_usage: true } }));
    const chunks = stream.data.filter((data) => data !== "[DONE]");
    for (const chunk of chunks) expect(strictOpenAIErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    expect(chunks.some((chunk) => chunk.choices[0]?.delta.annotations?.[0]?.type === "url_citation")).toBe(true);
  });

  it("sends no annotations with none, and still validates", async () => {
    const { body } = await complete(stack.url, { "x-chat-annotations": "none" });
    expect(body.choices[0].message.annotations).toEqual([]);
    expect(body.choices[0].message.sources.length).toBeGreaterThan(0);
    expect(strictOpenAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
  });

  it("refuses another header value with a 422 on the header", async () => {
    const { status, body } = await complete(stack.url, { "x-chat-annotations": "footnotes", "x-citation-style": "html" });
    expect(status).toBe(422);
    expect(body.detail.map((issue: any) => issue.loc)).toEqual([["header", "x-chat-annotations"], ["header", "x-citation-style"]]);
  });

  it("sends the interface's file_citation with X-Chat-Annotations, spanning the same markers", async () => {
    const { body } = await complete(stack.url, { "x-chat-annotations": "file_citation" });
    const { content, annotations } = body.choices[0].message;
    expect(annotations.length).toBeGreaterThan(0);
    for (const annotation of annotations) {
      expect(annotation).toMatchObject({ type: "file_citation", file_citation: { filename: "handbook.md" } });
      expect(spanned(content, annotation.start_index, annotation.end_index)).toMatch(/^\[(handbook\.md|\d+(, \d+)*)\]$/);
    }
  });

  it("gives a deployment's file_citation to other clients, but url_citation to a client known to accept nothing else", async () => {
    const pinned = await startAdapter(stack.workspace.url, { CHAT_ANNOTATIONS: "file_citation" });
    const first = async (url: string, extra: Record<string, string>) => (await complete(url, extra)).body.choices[0].message.annotations[0].type;
    try {
      expect(await first(pinned.url, { "user-agent": "OpenAI/JS 7.57.0" })).toBe("file_citation");
      expect(await first(pinned.url, { "user-agent": "ai/7.0.173 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2" })).toBe("url_citation");
      expect(await first(pinned.url, { "user-agent": "ai/7.0.173 ai-sdk-provider-utils/5.0.81 node.js/v20.20.2" })).toBe("url_citation");
      // The request's header still wins.
      expect(await first(pinned.url, { "user-agent": "ai/7.0.173 ai-sdk-provider-utils/5.0.81", "x-chat-annotations": "file_citation" })).toBe("file_citation");
      expect(await first(stack.url, { "user-agent": "OpenAI/JS 7.57.0" })).toBe("url_citation");
    } finally {
      await pinned.close();
    }
  });
});

describe("Markdown citations", () => {
  let linked: RunningAdapter;
  beforeAll(async () => {
    linked = await startAdapter(stack.workspace.url, {
      CITATION_STYLE: "markdown",
      SOURCE_URL_TEMPLATE: "https://docs.example.com/{workspace}/{filename}?page={page}&title={title}",
    });
  });
  afterAll(() => linked.close());

  it("makes name markers and the Sources list links to the template's URLs, with annotations over the markers", async () => {
    const { body } = await complete(linked.url, { "x-chat-annotations": "url_citation" }, { model: "reason", messages: [{ role: "user", content: QUESTION }] });
    const { content, annotations } = body.choices[0].message;
    // A marker that names the document is a link to it; the Sources list links each source.
    expect(content).toContain("per calendar year. [handbook.md](https://docs.example.com/acme/handbook.md?page=&title=)");
    expect(content).toContain("**Sources**\n- [handbook.md — Leave policy](https://docs.example.com/acme/handbook.md?page=&title=Leave%20policy)");
    for (const { url_citation: citation } of annotations) {
      expect(spanned(content, citation.start_index, citation.end_index)).toMatch(/^\[(handbook\.md|\d+(, \d+)*)\]$/);
    }
    expect(strictOpenAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
  });

  it("turns the style on per request with X-Citation-Style, and the streamed content equals the plain one", async () => {
    const templated = await startAdapter(stack.workspace.url, { SOURCE_URL_TEMPLATE: "https://docs.example.com/{filename}" });
    try {
      expect((await complete(templated.url, {})).body.choices[0].message.content).not.toContain("**Sources**");
      const plain = await complete(templated.url, { "x-citation-style": "markdown" });
      const content = plain.body.choices[0].message.content as string;
      expect(content).toContain("**Sources**\n- [handbook.md — Leave policy](https://docs.example.com/handbook.md)");
      const stream = await postStream(`${templated.url}/v1/chat/completions`, headers({ "x-citation-style": "markdown" }), chatBody(QUESTION, { model: "reason", stream: true }));
      const chunks = stream.data.filter((data) => data !== "[DONE]");
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(content);
    } finally {
      await templated.close();
    }
  });
});

describe("what chat UIs read", () => {
  it("gives Open WebUI a source event per source, and Perplexity-style citations and search results, on chunks that keep choices", async () => {
    const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(), chatBody(QUESTION, { model: "reason", stream: true }));
    const chunks = stream.data.filter((data) => data !== "[DONE]");
    for (const chunk of chunks) {
      expect(Array.isArray(chunk.choices)).toBe(true);
      expect(openAIErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    }
    // Open WebUI's stream_body_handler: `if "event" in data: await event_emitter(data["event"])`;
    // its chat appends `source` events' data to the message's sources (a name, documents, metadata).
    const events = chunks.filter((chunk) => "event" in chunk).map((chunk) => chunk.event);
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      expect(event.type).toBe("source");
      expect(event.data.source.name).toBe("handbook.md");
      expect(event.data.document).toHaveLength(1);
      expect(event.data.metadata[0]).toMatchObject({ source: expect.stringContaining("handbook.md"), name: expect.any(String) });
    }
    // Lobe Chat reads `citations` (strings or {title,url}) and `search_results` ({title,url}) and,
    // from the chunk that finishes a choice, `delta.annotations[].url_citation.url`: the default serves it.
    const last = chunks.at(-1);
    expect(last.choices[0].finish_reason).toBe("stop");
    expect(last.citations.every((citation: unknown) => typeof citation === "string")).toBe(true);
    expect(last.search_results[0]).toMatchObject({ title: expect.any(String), url: expect.any(String) });
    const lobe = await postStream(`${stack.url}/v1/chat/completions`, headers({ "user-agent": "OpenAI/JS 4.104.0" }), chatBody(QUESTION, { stream: true }));
    const finishing = lobe.data.filter((data) => data !== "[DONE]" && data.choices[0]?.finish_reason).at(-1);
    expect(finishing.choices[0].delta.content).toBeUndefined();
    expect(finishing.choices[0].delta.annotations.map((annotation: any) => annotation.url_citation.url).length).toBeGreaterThan(0);
  });
});

describeWith(CHROMIUM, "citation links with the embedded workspace", () => {
  let browser: Browser;
  let adapter: RunningAdapter;
  beforeAll(async () => {
    browser = await startBrowser();
    let listening = "";
    adapter = await startAdapter(stack.workspace.url, { CITATION_STYLE: "markdown" }, undefined, {
      documents: documentReader([FIXTURE_DOCUMENTS]),
      publicUrl: () => listening,
    });
    listening = adapter.url;
  });
  afterAll(async () => {
    await browser.close();
    await adapter.close();
  });

  it("open the cited document in a browser, escaped, under a strict content security policy", async () => {
    const { body } = await complete(adapter.url, { "x-chat-annotations": "url_citation" });
    const { annotations, content } = body.choices[0].message;
    const url: string = annotations[0].url_citation.url;
    expect(url.startsWith(`${adapter.url}/documents/acme/handbook.md`)).toBe(true);
    expect(content).toContain(`](${adapter.url}/documents/acme/handbook.md`);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    const response = await page.goto(url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(await page.title()).toBe("handbook.md");
    expect(await page.locator("pre").innerText()).toContain("25 days of paid annual leave");
    expect(errors).toEqual([]);
    const missing = await page.goto(`${adapter.url}/documents/acme/..%2F..%2Fpackage.json`);
    expect(missing?.status()).toBe(404);
    await page.close();
  });
});
