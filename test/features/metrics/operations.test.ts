import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postStream } from "../../helpers/read-sse.js";
import { chatBody, headers, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ CITATION_STYLE: "markdown" });
});
afterAll(() => stack.close());

/** The value of one Prometheus sample, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const [series, value] = [line.slice(0, line.lastIndexOf(" ")), line.slice(line.lastIndexOf(" ") + 1)];
    if (series !== name && !series.startsWith(`${name}{`)) continue;
    if (wanted.every((label) => series.includes(label))) return Number(value);
  }
  return 0;
}

describe("GET /metrics", () => {
  it("counts requests, upstream calls, finished queries and shared polling", async () => {
    await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("leave policy")) });
    await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("x", { model: "nope" })) });
    await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("leave [fault:failed]")) });
    const response = await fetch(`${stack.url}/metrics`);
    expect(response.headers.get("content-type")).toMatch(/text\/plain/);
    const text = await response.text();
    expect(sample(text, "adapter_http_requests_total", { route: "/v1/chat/completions", mode: "ask", status: "200" })).toBe(1);
    expect(sample(text, "adapter_http_requests_total", { route: "/v1/chat/completions", status: "422" })).toBe(1);
    expect(sample(text, "adapter_http_request_duration_seconds_count", { route: "/v1/chat/completions", status: "200" })).toBe(1);
    expect(sample(text, "adapter_upstream_requests_total", { endpoint: "POST /queries", outcome: "200" })).toBe(2);
    expect(sample(text, "adapter_upstream_requests_total", { endpoint: "GET /queries", outcome: "200" })).toBeGreaterThan(0);
    expect(sample(text, "adapter_queries_finished_total", { mode: "ask", state: "PROCESSED" })).toBe(1);
    expect(sample(text, "adapter_queries_finished_total", { mode: "ask", state: "FAILED" })).toBe(1);
    expect(sample(text, "adapter_watcher_list_calls_total")).toBe(sample(text, "adapter_upstream_requests_total", { endpoint: "GET /queries", outcome: "200" }));
    expect(text).toContain("adapter_open_streams 0");
    expect(text).toContain("adapter_watcher_waiting_queries 0");
    expect(text).toContain("process_cpu_seconds_total");
  });

  it("shows open streams and waiting queries while a stream runs", async () => {
    const controller = new AbortController();
    const response = await fetch(`${stack.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify(chatBody("leave [fault:stall]", { stream: true })),
      signal: controller.signal,
    });
    await response.body?.getReader().read();
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    expect(sample(text, "adapter_open_streams")).toBe(1);
    expect(sample(text, "adapter_watcher_waiting_queries")).toBe(1);
    expect(sample(text, "adapter_watcher_pollers")).toBe(1);
    controller.abort();
  });
});

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document whose request schema is the one requests are validated with", async () => {
    const document = (await (await fetch(`${stack.url}/openapi.json`)).json()) as any;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe("3.1.0");
    const request = document.components.schemas.ChatCompletionRequest;
    expect(request.required).toEqual(["model", "messages"]);
    expect(request.properties.n.anyOf[0].maximum).toBe(8);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/v1/chat/completions", "/v1/models", "/health"]));
  });
});

describe("CITATION_STYLE=markdown", () => {
  it("appends a Sources list when the output has no references section of its own, streamed and not", async () => {
    // An upstream that lists its sources in a structured array and cites with a bare marker.
    const query = {
      id: "q-1",
      status: "PROCESSED",
      output: "Employees get 25 days of leave [1].",
      steps: [],
      sources: [{ filename: "handbook.pdf", page: 4, title: "Employee handbook", snippet: "25 days" }],
    };
    const upstream = createServer((request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(request.method === "POST" ? query : { data: [query], next_cursor: null, has_more: false }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const adapter = await startAdapter(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, {
      CITATION_STYLE: "markdown",
      DEFAULT_WORKSPACE: "acme",
    });
    try {
      const url = `${adapter.url}/v1/chat/completions`;
      const whole = (await (await fetch(url, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("leave")) })).json()) as any;
      const message = whole.choices[0].message;
      expect(message.content).toBe("Employees get 25 days of leave [1].\n\n**Sources**\n- handbook.pdf, p. 4 — Employee handbook");
      const { start_index: start, end_index: end } = message.annotations[0].url_citation;
      expect([...message.content].slice(start, end).join("")).toBe("[1]");
      const stream = await postStream(url, headers(), chatBody("leave", { stream: true }));
      const content = stream.data
        .filter((item) => item !== "[DONE]")
        .map((chunk) => chunk.choices[0]?.delta.content ?? "")
        .join("");
      expect(content).toBe(message.content);
    } finally {
      await adapter.close();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});
