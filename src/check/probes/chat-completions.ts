import { request } from "undici";
import { z } from "zod";
import type { CitedSource } from "../../core/source-record.js";
import { chatCompletionSchema } from "../../dialects/chat-completions/chat-completion.js";
import { normalizeSources } from "../../upstream/normalize-sources.js";
import { createTransport } from "../../upstream/transport.js";
import { errorMessage } from "../../util/error-message.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure } from "../describe-failure.js";
import { jsonOf, type ProbeContext } from "../probe-context.js";
import { startOwnAdapter } from "./own-adapter.js";
import { labelled } from "./query-runs.js";
import { seconds } from "./query-statuses.js";

/** One answer to the side-by-side question, as both lines and the JSON report show it. */
export interface AnswerSummary {
  ms: number;
  content: string;
  /** The sources the answer named (the adapter's reading of the service's, for the service). */
  sources: CitedSource[];
  annotations: unknown[];
}

/** Both answers to the side-by-side question, and the two lines about them. */
export interface ChatOutcome {
  question: string;
  lines: CheckLine[];
  ours: AnswerSummary | null;
  service: AnswerSummary | null;
}

/** The setting behind the adapter's own answer failing with a status, where one is. */
const ANSWER_SETTINGS: Partial<Record<number, string>> = { 401: "WORKSPACE_API_KEY", 504: "ASK_TIMEOUT_MS" };

// The service's chat completion as the interface describes it (ChatCompletion): only what is
// compared is read, loosely, since the adapter never relies on this endpoint.
const serviceCompletionSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string(),
          annotations: z.array(z.unknown()).nullish(),
          sources: z.array(z.unknown()).nullish(),
        }),
      }),
    )
    .min(1),
});

/**
 * The same question asked twice, in `ask` mode (docs/check.md#side-by-side): through the adapter
 * itself (own-adapter.ts, its whole path from the route to the answer), and through the service's
 * own `/v1/chat/completions` where it has one. The adapter's answer must come (or the check
 * fails); the service's is shown beside it, and never fails the run: the adapter does not use it.
 */
export async function probeChatCompletions(context: ProbeContext): Promise<ChatOutcome> {
  const question = labelled("chat", context.settings.question);
  const body = { model: "ask", messages: [{ role: "user", content: question }] };
  context.phase("adapter-answer");
  const ours = await ownAnswer(context, body);
  context.phase("service-chat-completions");
  const service = await serviceAnswer(context, body);
  const beside = ours.summary && service.summary ? { ...service.line, detail: `${service.line.detail}; beside the adapter's ${describe(ours.summary)}` } : service.line;
  return { question, lines: [ours.line, beside], ours: ours.summary, service: service.summary };
}

async function ownAnswer(context: ProbeContext, body: unknown): Promise<{ line: CheckLine; summary: AnswerSummary | null }> {
  const own = await startOwnAdapter(context);
  const started = context.now();
  try {
    const response = await request(`${own.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${context.settings.apiKey}`, "service-workspace": context.settings.workspace ?? "", "content-type": "application/json" },
      body: JSON.stringify(body),
      headersTimeout: context.settings.config.upstream.queryTimeoutMs.ask + 10_000,
      bodyTimeout: 0,
    });
    const text = await response.body.text();
    const ms = context.now() - started;
    const json = jsonOf(text) as { error?: { message?: string } } | undefined;
    if (response.statusCode !== 200) {
      const detail = `the adapter's own answer failed: ${response.statusCode} ${json?.error?.message ?? text.slice(0, 200)}`;
      return { line: checkLine("adapter-answer", "fail", detail, ANSWER_SETTINGS[response.statusCode]), summary: null };
    }
    const parsed = chatCompletionSchema.safeParse(json);
    if (!parsed.success) return { line: checkLine("adapter-answer", "fail", `the adapter's answer is not a chat completion: ${parsed.error.issues[0]?.message ?? ""}`), summary: null };
    const message = parsed.data.choices[0]?.message;
    const summary: AnswerSummary = {
      ms,
      content: message?.content ?? "",
      sources: message?.sources ?? [],
      annotations: message?.annotations ?? [],
    };
    return { line: checkLine("adapter-answer", "pass", `the adapter answered in ${seconds(ms)}: ${describe(summary)}`), summary };
  } catch (error) {
    return { line: checkLine("adapter-answer", "fail", `the adapter's own answer failed: ${errorMessage(error)}`), summary: null };
  } finally {
    await own.close();
  }
}

async function serviceAnswer(context: ProbeContext, body: unknown): Promise<{ line: CheckLine; summary: AnswerSummary | null }> {
  const name = "service-chat-completions";
  const { settings } = context;
  // The service answers when its query has: bounded by the ask deadline, not a single call's.
  const timeoutMs = settings.config.upstream.queryTimeoutMs.ask;
  const { connectTimeoutMs } = settings.config.upstream;
  const transport = createTransport({ baseUrl: context.upstreamUrl, timeoutMs, connectTimeoutMs, getRetries: 0 });
  const started = context.now();
  try {
    const headers = {
      authorization: `Bearer ${settings.apiKey}`,
      "service-workspace": settings.workspace ?? "",
      "content-type": "application/json",
      accept: "application/json",
    };
    const response = await transport.send({ method: "POST", path: "/v1/chat/completions", headers, body: JSON.stringify(body) }, undefined);
    const ms = context.now() - started;
    if (response.statusCode === 404 || response.statusCode === 405) {
      return { line: checkLine(name, "warn", `the service has no /v1/chat/completions (${response.statusCode}): nothing to set beside the adapter's answer`), summary: null };
    }
    if (response.statusCode !== 200) return { line: checkLine(name, "warn", `the service's /v1/chat/completions answered ${response.statusCode}`), summary: null };
    const parsed = serviceCompletionSchema.safeParse(jsonOf(response.text));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { line: checkLine(name, "warn", `the service's /v1/chat/completions answered 200, but not the interface's ChatCompletion (${issue?.path.join(".")}: ${issue?.message})`), summary: null };
    }
    const message = parsed.data.choices[0]?.message;
    const sources = normalizeSources(message?.sources ?? []);
    const cited = (message?.sources ?? []).map((source) => typeof source === "object" && source !== null && (source as { cited?: unknown }).cited === true);
    const summary: AnswerSummary = {
      ms,
      content: message?.content ?? "",
      sources: sources.map((source, index) => ({ ...source, cited: cited[index] ?? false })),
      annotations: message?.annotations ?? [],
    };
    return { line: checkLine(name, "pass", `the service answered in ${seconds(ms)}: ${describe(summary)}`), summary };
  } catch (error) {
    const failure = describeFailure(error, "POST /v1/chat/completions", timeoutMs);
    return { line: checkLine(name, "warn", `the service's /v1/chat/completions: ${failure.detail}`), summary: null };
  } finally {
    await transport.close();
  }
}

function describe(summary: AnswerSummary): string {
  const cited = summary.sources.filter((source) => source.cited).length;
  return `${summary.content.length} characters, ${summary.sources.length} sources (${cited} cited), ${summary.annotations.length} annotations`;
}
