import OpenAI from "openai";
import { get_encoding } from "tiktoken";
import { connectMcp } from "./mcp-clients.js";

/** OpenAI's own o200k tokenizer (tiktoken): the oracle of the tokens an MCP answer spent, which its result does not report. */
const tiktoken = get_encoding("o200k_base");

/** Tokens as docs/upstream-assumptions.md#usage counts them: the question, then the answer's text and its steps. */
export function countedTokens(question: string, answer: string, reasoning: string): { input: number; output: number } {
  const count = (text: string) => (text === "" ? 0 : tiktoken.encode(text).length);
  return { input: count(question), output: count(answer) + count(reasoning) };
}

/** What one answer spent, as its client learnt it, and whose it was. */
export interface Spent {
  account: string;
  workspace: string;
  mode: string;
  input: number;
  output: number;
}

/** Asks the MCP tool `mode` and returns the tokens the answer spent (counted from its result: the text and steps it carries). */
export async function askMcp(url: string, key: string, workspace: string, mode: "ask" | "reason", question: string, extra: Record<string, string> = {}) {
  const client = await connectMcp("2025-11-25", `${url}/mcp/${workspace}`, { authorization: `Bearer ${key}`, ...extra });
  try {
    const result = await client.callTool(mode, { question });
    const output = result.structuredContent as { answer: string; steps: string[]; sources: unknown[] };
    if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`);
    return { output, tokens: countedTokens(question, output.answer, output.steps.join("\n")) };
  } finally {
    await client.close();
  }
}

/** The usage endpoint's page, read with an admin key. */
export async function readUsage(url: string, adminKey: string, query: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/v1/organization/usage/completions?${query}`, { headers: { authorization: `Bearer ${adminKey}` } });
  return { status: response.status, body: await response.json() };
}

/** Sums of the usage endpoint's results grouped by `api_key_id`, `project_id` and `model`, by `<account> <workspace> <mode>`. */
export function sumsByGroup(page: { data: { results: any[] }[] }): Map<string, { input: number; output: number; requests: number }> {
  const sums = new Map<string, { input: number; output: number; requests: number }>();
  for (const bucket of page.data) {
    for (const result of bucket.results) {
      const name = `${result.api_key_id} ${result.project_id} ${result.model}`;
      const sum = sums.get(name) ?? { input: 0, output: 0, requests: 0 };
      sum.input += result.input_tokens;
      sum.output += result.output_tokens;
      sum.requests += result.num_model_requests;
      sums.set(name, sum);
    }
  }
  return sums;
}

/** The same sums, from what the answers reported. */
export function sumsOf(spent: readonly Spent[]): Map<string, { input: number; output: number; requests: number }> {
  const sums = new Map<string, { input: number; output: number; requests: number }>();
  for (const answer of spent) {
    const name = `${answer.account} ${answer.workspace} ${answer.mode}`;
    const sum = sums.get(name) ?? { input: 0, output: 0, requests: 0 };
    sum.input += answer.input;
    sum.output += answer.output;
    sum.requests += 1;
    sums.set(name, sum);
  }
  return sums;
}

/** The samples of a Prometheus metric, as `{labels} value` lines (scraped with `METRICS_KEY`, which a deployment without one ignores). */
export async function samples(url: string, name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } })).text();
  return new Map([...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\}) (\\S+)$`, "gm"))].map((match) => [match[1] as string, Number(match[2])]));
}

/** Who sends an answer: a key, the headers it adds (a gateway's identity header), and the account usage should name. */
export interface Sender {
  key: string;
  headers?: Record<string, string>;
  account: string;
}

/** The governance tests' callers: two named keys, a gateway (LiteLLM's headers) with two identities, a bare key, an admin. */
export const SENDERS = {
  search: { key: "sk-team-search-1", account: "team-search" },
  legal: { key: "sk-team-legal-1", account: "team-legal" },
  alice: { key: "sk-gateway-1", headers: { "x-litellm-user_api_key_user_id": "alice" }, account: "litellm/alice" },
  bob: { key: "sk-gateway-1", headers: { "x-litellm-user_api_key_user_id": "bob" }, account: "litellm/bob" },
} satisfies Record<string, Sender>;
export const BARE_KEY = "sk-bare-client";
export const ADMIN_KEY = "sk-ops-admin";
/** The key Prometheus scrapes with: with it set, the usage counters name keys (docs/observability.md#metrics). */
export const METRICS_KEY = "sk-prometheus-scrape";

/** The adapter settings that list `SENDERS`' keys (with the deployment's own workspace key `held`). */
export function listedKeys(held: string): Record<string, string> {
  const { search, legal, alice } = SENDERS;
  return {
    WORKSPACE_API_KEY: held,
    ADAPTER_API_KEYS: `team-search=${search.key}, team-legal=${legal.key}, ${BARE_KEY}`,
    GATEWAY_API_KEYS: `litellm=${alice.key}`,
    ADMIN_API_KEYS: `ops=${ADMIN_KEY}`,
    METRICS_API_KEY: METRICS_KEY,
  };
}

function sdk(url: string, sender: Sender, workspace: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: sender.key, defaultHeaders: { "service-workspace": workspace, ...sender.headers }, maxRetries: 0 });
}

/** A chat completion, JSON or streamed with `include_usage`: the usage it reports. */
export async function chatAnswer(url: string, sender: Sender, workspace: string, question: string, stream: boolean): Promise<Spent> {
  const client = sdk(url, sender, workspace);
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  if (stream) {
    const chunks = await client.chat.completions.create({ model: "ask", messages: [{ role: "user", content: question }], stream: true, stream_options: { include_usage: true } });
    for await (const chunk of chunks) usage = chunk.usage ?? usage;
  } else {
    usage = (await client.chat.completions.create({ model: "ask", messages: [{ role: "user", content: question }] })).usage;
  }
  if (!usage) throw new Error("no usage");
  return { account: sender.account, workspace, mode: "ask", input: usage.prompt_tokens, output: usage.completion_tokens };
}

/** A Responses answer in `mode`, in the foreground or in the background (followed until it completes): the usage it reports. */
export async function responseAnswer(url: string, sender: Sender, workspace: string, question: string, mode: string, background: boolean): Promise<Spent> {
  const client = sdk(url, sender, workspace);
  let response = await client.responses.create({ model: mode, input: question, ...(background ? { background: true } : {}) });
  while (response.status === "queued" || response.status === "in_progress") {
    await new Promise((resolve) => setTimeout(resolve, 20));
    response = await client.responses.retrieve(response.id);
  }
  if (response.status !== "completed" || !response.usage) throw new Error(`response ${response.status}`);
  return { account: sender.account, workspace, mode, input: response.usage.input_tokens, output: response.usage.output_tokens };
}

/** An MCP `ask` tool call: the tokens its answer spent (the result reports none: counted from its text with tiktoken). */
export async function mcpAnswer(url: string, sender: Sender, workspace: string, question: string): Promise<Spent> {
  const { tokens } = await askMcp(url, sender.key, workspace, "ask", question, sender.headers);
  return { account: sender.account, workspace, mode: "ask", ...tokens };
}
