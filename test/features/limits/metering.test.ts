import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import type { ReceivedSpan } from "../../helpers/otlp-receiver.js";
import { postStream } from "../../helpers/read-sse.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { startTracedStack, type TracedStack } from "../../helpers/traced-stack.js";

// docs/rate-limits.md: every answer's usage is charged to the key's tokens per minute exactly once,
// whatever its dialect, its delivery and whether it is traced.

const TPM = 1_000_000;
const QUESTION = "How many vacation days do employees get?";
const PRINCIPAL = credentialHash(API_KEY);

type Adapter = Pick<Stack, "url" | "adapter">;

/** The tokens charged so far to the test key in workspace `acme`, read from the limit counters (admitting under TPM alone charges nothing). */
async function charged(stack: Adapter): Promise<number> {
  const admission = await stack.adapter.rateLimits?.take(PRINCIPAL, "acme", { tpm: TPM });
  if (!admission) throw new Error("no rate limits");
  admission.release();
  return TPM - Number(admission.headers["x-ratelimit-remaining-tokens"]);
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One answer as a client sees it: the usage it reported, when it reports one. */
type Send = (stack: Adapter, extraHeaders: Record<string, string>) => Promise<number | undefined>;

const mcpHeaders = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

/** An MCP `ask` call; with a progress token the answer comes as an SSE stream of progress, then the result. */
function mcpCall(progress: boolean): Send {
  return async (stack, extra) => {
    const params = { name: "ask", arguments: { question: QUESTION }, ...(progress ? { _meta: { progressToken: "p" } } : {}) };
    const stream = await postStream(`${stack.url}/mcp`, headers({ ...mcpHeaders, ...extra }), { jsonrpc: "2.0", id: 1, method: "tools/call", params });
    expect(stream.status).toBe(200);
    const result = stream.events.length > 0 ? stream.data.at(-1) : JSON.parse(stream.raw);
    expect(result.result.isError).toBeFalsy();
    if (progress) expect(stream.headers.get("content-type")).toContain("text/event-stream");
    return undefined;
  };
}

const cases: { name: string; send: Send }[] = [
  {
    name: "chat completions, JSON",
    send: async (stack, extra) => {
      const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(extra), body: JSON.stringify(chatBody(QUESTION)) });
      expect(response.status).toBe(200);
      return ((await response.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    },
  },
  {
    name: "chat completions, stream with include_usage",
    send: async (stack, extra) => {
      const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(extra), chatBody(QUESTION, { stream: true, stream_options: { include_usage: true } }));
      expect(stream.status).toBe(200);
      return stream.data.find((data) => typeof data === "object" && data.usage)?.usage.total_tokens;
    },
  },
  {
    name: "chat completions, stream without include_usage",
    send: async (stack, extra) => {
      const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(extra), chatBody(QUESTION, { stream: true }));
      expect(stream.status).toBe(200);
      expect(stream.raw).not.toContain('"usage":{');
      return undefined;
    },
  },
  {
    name: "Responses, JSON",
    send: async (stack, extra) => {
      const response = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(extra), body: JSON.stringify({ model: "ask", input: QUESTION }) });
      expect(response.status).toBe(200);
      return ((await response.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    },
  },
  {
    name: "Responses, stream",
    send: async (stack, extra) => {
      const stream = await postStream(`${stack.url}/v1/responses`, headers(extra), { model: "ask", input: QUESTION, stream: true });
      expect(stream.status).toBe(200);
      return stream.data.find((data) => data?.type === "response.completed")?.response.usage.total_tokens;
    },
  },
  { name: "MCP ask, JSON", send: mcpCall(false) },
  { name: "MCP ask, stream of progress", send: mcpCall(true) },
];

/** The usage the sampled answer span of trace `traceId` reports, once exported. */
async function spanUsage(stack: TracedStack, traceId: string): Promise<number> {
  return until(async () => {
    const spans = await stack.flush();
    const answer = spans.find((span: ReceivedSpan) => span.traceId === traceId && span.attributes["gen_ai.usage.input_tokens"] !== undefined);
    if (!answer) return undefined;
    return Number(answer.attributes["gen_ai.usage.input_tokens"]) + Number(answer.attributes["gen_ai.usage.output_tokens"]);
  }, `the answer span of trace ${traceId}`);
}

/**
 * Sends one answer and returns what it charged: waits until the charge reaches `expected`, and for
 * a traced answer until its span, whose usage is counted after the last byte, is exported (by then
 * every charge the answer makes has been made).
 */
async function chargeOf(stack: Adapter, send: Send, extra: Record<string, string>, afterDelivery?: () => Promise<number>) {
  const before = await charged(stack);
  const reported = await send(stack, extra);
  const traced = afterDelivery ? await afterDelivery() : undefined;
  const expected = reported ?? traced;
  if (expected !== undefined) await until(async () => ((await charged(stack)) - before >= expected ? true : undefined), `a charge of ${expected}`).catch(() => undefined);
  else await until(async () => ((await charged(stack)) > before ? true : undefined), "a charge");
  return { reported, traced, charged: (await charged(stack)) - before };
}

describe("metering: one charge per answer (RATE_LIMIT_TPM)", () => {
  let traced: TracedStack;
  let untraced: Stack;
  /** The usage each case's answer reported or traced (the same answer whatever the tracing). */
  const usageOf = new Map<string, number>();

  beforeAll(async () => {
    [traced, untraced] = await Promise.all([startTracedStack({}, { RATE_LIMIT_TPM: String(TPM) }), startStack({ RATE_LIMIT_TPM: String(TPM) })]);
  });
  afterAll(async () => {
    await Promise.all([traced?.close(), untraced?.close()]);
  });

  let traces = 0;
  describe.each(cases)("$name", ({ name, send }) => {
    it("traced (sampled): charged once, the answer's usage", async () => {
      traces += 1;
      const traceId = traces.toString(16).padStart(32, "a");
      const result = await chargeOf(traced, send, { traceparent: `00-${traceId}-b7ad6b7169203331-01` }, () => spanUsage(traced, traceId));
      const usage = result.reported ?? (result.traced as number);
      if (result.reported !== undefined) expect(result.traced).toBe(result.reported);
      expect(usage).toBeGreaterThan(0);
      usageOf.set(name, usage);
      expect(result.charged).toBe(usage);
    });

    it("untraced: charged once, the answer's usage", async () => {
      const result = await chargeOf(untraced, send, {});
      const usage = result.reported ?? usageOf.get(name);
      expect(usage).toBeGreaterThan(0);
      if (result.reported !== undefined && usageOf.has(name)) expect(result.reported).toBe(usageOf.get(name));
      expect(result.charged).toBe(usage);
    });
  });

  // The regression of issue 30: a streamed chat completion without include_usage, traced, was charged twice (in `remember` and for the span).
  it("regression: a sampled, streamed chat completion without include_usage is charged once, not twice", async () => {
    const reference = await chargeOf(traced, cases[0]?.send as Send, {});
    const traceId = "f".repeat(32);
    const send = cases[2]?.send as Send;
    const result = await chargeOf(traced, send, { traceparent: `00-${traceId}-b7ad6b7169203331-01` }, () => spanUsage(traced, traceId));
    expect(result.traced).toBe(reference.reported);
    expect(result.charged).toBe(reference.reported);
  });
});
