import type { ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { BodyEncoder, StreamEncoder } from "../answer/answer-encoder.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "../answer/answer-events.js";
import type { AnswerService, Following, RunningAnswer } from "../answer/answer-service.js";
import type { Identity } from "../auth/authenticate.js";
import { type AdapterError, ClientClosedError, toAdapterError } from "../errors/adapter-error.js";
import { type PlanInput, planQueries } from "../plan/plan-queries.js";
import type { AnswerStart, AnswerTrace } from "../telemetry/answer-trace.js";
import { sendJson } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import type { RequestContexts } from "./request-context.js";
import { abortWhenClientLeaves } from "./request-body.js";
import { type KeepAliveSweep, SseWriter } from "./sse-writer.js";

/**
 * Told what the client is about to receive once the answer is whole and encoded, before its last
 * bytes go (the JSON body, or the stream's closing frames): conversations and stored responses are
 * written here, and the answer ends when the returned promise settles — so that the client's next
 * request, to any replica, finds them (docs/architecture.md#redis-down-or-slow). The callee bounds
 * the wait, logs its failures, and never rejects.
 */
export type BeforeAnswerEnds = (sent: ChoiceSent[]) => Promise<void>;

/** What the limits step hands the runner for the tokens-per-minute limit (`limits/admission.ts`). */
export interface UsageMeter {
  /** Whether the answer's tokens count (`RATE_LIMIT_TPM`): its usage is then counted even when the client does not ask for it. */
  readonly countsTokens: boolean;
  /** Charges an answer's usage to the key's tokens per minute (called once per answer, by the runner). */
  charge(usage: TokenUsage): void;
}

/** A meter for an answer nothing is charged for (no TPM limit, a chat UI's housekeeping). */
export const NOT_METERED: UsageMeter = { countsTokens: false, charge: () => undefined };

/**
 * One answer being delivered, as a delivery sees it: the running answer, its usage counted and
 * charged at most once however many times it is asked for, its trace, and what to do before the
 * last bytes.
 */
export interface AnswerRun {
  readonly response: ServerResponse;
  readonly answer: RunningAnswer;
  readonly meter: UsageMeter;
  readonly trace: AnswerTrace;
  readonly remember: BeforeAnswerEnds | undefined;
  /** The answer's usage over what it sent: counted once (memoised) and charged to the meter once. */
  usage(sent: readonly ChoiceSent[]): Promise<TokenUsage>;
}

/** What a delivery may use of the adapter. */
export interface DeliveryContext {
  readonly lifecycle: Lifecycle;
  readonly facts: RequestContexts;
  readonly logger: Logger;
}

/**
 * How an answer reaches its client: a JSON body (`json`), a stream of server-sent events (`sse`),
 * or collected for a tool result with progress (`collect`, MCP). A new dialect brings an encoder
 * and picks one.
 */
export interface Delivery<Result> {
  /** Whether the client is told the answer's usage: the prompt is then counted while the upstream answers. */
  readonly reportsUsage: boolean;
  /** Whether the response carries `Service-Query-Id` (the OpenAI dialects; MCP says it in the result). */
  readonly namesQueries: boolean;
  deliver(run: AnswerRun, context: DeliveryContext): Promise<Result>;
}

/** An admitted answer request, as the runner needs it: who asks, where, under which meter. */
export interface AnswerOrder {
  response: ServerResponse;
  identity: Identity;
  workspace: string;
  meter: UsageMeter;
  /** What to plan: each dialect reads its own request into this. */
  input: PlanInput;
  /** The answer span's own facts (the runner adds the mode, workspace and principal); the span starts only when tracing is on. */
  trace: Omit<AnswerStart, "mode" | "workspace" | "principal">;
  /** Aborts the answer's queries; by default when the client leaves. */
  controller?: AbortController | undefined;
}

/** What a route decides once the queries' ids are known: the delivery, the id the client sees, and what to remember. */
export interface Prepared<Result> {
  delivery: Delivery<Result>;
  /** The id the client sees (`chatcmpl-…`, `resp_…`), for the span. */
  respondedAs?: string | undefined;
  remember?: BeforeAnswerEnds | undefined;
}

/** What the runner is built from. */
export interface AnswerRunnerOptions extends DeliveryContext {
  answers: AnswerService;
  modeField: string;
  newQueryId: () => string;
}

/**
 * The answer runner (docs/architecture.md#data-flow-of-one-request): what every answer does, in
 * one place, whatever its dialect. Given an admitted request, a plan input and a delivery, it
 * plans, tells the request's facts, starts the span, starts the answer (`AnswerService.start`),
 * counts and charges its usage once, follows its events through the dialect's encoder, remembers
 * the turn before the last bytes, and writes. Routes only read their own request shape.
 */
export class AnswerRunner {
  constructor(private readonly options: AnswerRunnerOptions) {}

  /** Plans, starts and delivers an admitted request's answer from the workspace. */
  async run<Result>(order: AnswerOrder, prepare: (queryIds: string[]) => Prepared<Result>): Promise<Result> {
    const { facts } = this.options;
    const { response, identity, workspace, meter, input } = order;
    const plan = planQueries(input, { modeField: this.options.modeField, newQueryId: this.options.newQueryId });
    const queryIds = plan.queries.map((query) => query.queryId);
    facts.of(response).answering({ workspace, mode: plan.mode, queryIds, continued: plan.continued });
    const { delivery, respondedAs, remember } = prepare(queryIds);
    if (delivery.namesQueries) response.setHeader("service-query-id", queryIds.join(", "));
    const trace = facts.traceAnswer(response, { ...order.trace, mode: plan.mode, workspace, principal: identity.principal });
    if (respondedAs !== undefined) trace.respondedAs(respondedAs);
    const job = {
      plan,
      caller: { credential: identity.upstreamCredential, workspace, credentialKey: identity.upstreamKey },
      controller: order.controller ?? abortWhenClientLeaves(response, facts),
      countsUsage: delivery.reportsUsage || meter.countsTokens,
      trace,
    };
    // The queries are created under the answer's span: the upstream client finds it in the adapter's context.
    const answer = await trace.within(() => this.options.answers.start(job));
    return delivery.deliver(metered(response, answer, meter, remember), this.options);
  }

  /**
   * Delivers an answer the adapter gives itself (a chat UI's housekeeping, docs/chat-ui-tasks.md):
   * no plan, no span, nothing charged; encoded and written like any other.
   */
  deliverLocal<Result>(response: ServerResponse, answer: RunningAnswer, delivery: Delivery<Result>): Promise<Result> {
    return delivery.deliver(metered(response, answer, NOT_METERED), this.options);
  }
}

/** The run of an answer whose usage is counted once and charged once, on first asking. */
function metered(response: ServerResponse, answer: RunningAnswer, meter: UsageMeter, remember?: BeforeAnswerEnds): AnswerRun {
  let counted: Promise<TokenUsage> | undefined;
  return {
    response,
    answer,
    meter,
    trace: answer.trace,
    remember,
    usage(sent) {
      counted ??= answer.usage(sent).then((usage) => {
        meter.charge(usage);
        return usage;
      });
      return counted;
    },
  };
}

/**
 * A non-streamed answer as one JSON body (docs/architecture.md#data-flow-of-one-request): every
 * event into the dialect's encoder, usage counted over what it holds, one body. A `failed` event,
 * or an answer that never finished (the client left), is thrown for the edge to map.
 */
export function json<Body>(encoder: BodyEncoder<Body>): Delivery<Body> {
  return {
    reportsUsage: true,
    namesQueries: true,
    async deliver(run) {
      const { answer, response } = run;
      let finished = 0;
      for await (const event of answer.events(false)) {
        if (event.type === "failed") throw event.error;
        if (event.type === "finished") finished += 1;
        encoder.add(event);
      }
      if (finished < answer.queryIds.length) throw new ClientClosedError();
      const sent = encoder.sent();
      const usage = await run.usage(sent);
      const body = encoder.body(usage);
      await run.remember?.(sent);
      response.setHeader("cache-control", "no-store");
      sendJson(response, body);
      run.trace.delivered(sent, usage);
      return body;
    },
  };
}

/**
 * A streamed answer as server-sent events: the encoder's opening frames, each event's frames as
 * it comes, usage when the encoder reports it, the closing frames. After the headers, a failure
 * is the dialect's failure frames, never a throw; a client that leaves ends it quietly (the
 * answer's controller then stops following the queries). An answer whose usage the client does
 * not get is still counted when a TPM limit or a sampled span needs it: after the last frame.
 */
export function sse(encoder: StreamEncoder, sweep: KeepAliveSweep): Delivery<void> {
  return {
    reportsUsage: encoder.needsUsage,
    namesQueries: true,
    async deliver(run, context) {
      const { answer, response, trace } = run;
      const writer = new SseWriter(response, sweep, context.facts, (error) => encoder.fail(error));
      writer.open();
      const unregister = context.lifecycle.trackStream(writer);
      const events = answer.events(true);
      try {
        for (const frame of encoder.open()) await writer.send(frame);
        let finished = 0;
        for await (const event of events) {
          if (event.type === "failed") {
            if (event.error.status >= 500) context.logger.warn({ err: { message: event.error.message } }, "stream failed");
            await writer.fail(event.error);
            return;
          }
          if (event.type === "finished") finished += 1;
          for (const frame of encoder.encode(event)) await writer.send(frame);
          if (writer.isClosed) return;
        }
        if (finished < answer.queryIds.length || writer.isClosed) return;
        const sent = encoder.sent();
        const usage = encoder.needsUsage ? await run.usage(sent) : undefined;
        const closing = encoder.close(usage);
        // Charged as the stream ends even when the client did not ask for usage (the TPM limit).
        const counting = usage === undefined && (run.meter.countsTokens || trace.recording) ? run.usage(sent) : undefined;
        counting?.catch(() => undefined);
        await run.remember?.(sent);
        for (const frame of closing) await writer.send(frame);
        if (writer.isClosed) return;
        writer.end();
        trace.delivered(sent, usage ?? (trace.recording ? counting : undefined));
      } catch (error) {
        const failure = toAdapterError(error);
        if (writer.isClosed || failure instanceof ClientClosedError) return;
        trace.fail(failure);
        context.logger.warn({ err: { message: failure.message } }, "stream failed");
        await writer.fail(failure);
      } finally {
        unregister();
        await events.return(undefined);
      }
    },
  };
}

/** A dialect's encoder of an answer collected whole for a result (an MCP tool's). */
export interface CollectEncoder {
  add(event: AnswerEvent): void;
  /** Whether the answer ended (every query PROCESSED): only then is there a result to give. */
  readonly finished: boolean;
  sent(): ChoiceSent[];
}

/** Told of a collected answer's progress (MCP's progress notifications); its promises never reject. */
export interface ProgressSink {
  /** The query exists and runs. */
  started(queryId: string): Promise<void>;
  /** One event of the answer (its steps are progress). */
  event(event: AnswerEvent): Promise<void>;
  /** The answer ended, however. */
  done(): void;
}

/**
 * An answer collected whole for a result (an MCP tool call), with progress when the client asked
 * for it (the steps as they come, the output whole at the end). Never throws once started: a
 * failure, a shutdown or a client that left is returned as the error the result reports. A
 * shutdown aborts `controller` and is reported as itself.
 */
export function collect<Encoder extends CollectEncoder>(
  encoder: Encoder,
  options: { progress?: ProgressSink | undefined; shutdown: () => AdapterError | undefined },
): Delivery<Encoder | AdapterError> {
  const { progress } = options;
  const following: Following = progress ? "steps" : false;
  return {
    reportsUsage: false,
    namesQueries: false,
    async deliver(run) {
      const { answer, trace } = run;
      try {
        await progress?.started(answer.queryIds[0] as string);
        for await (const event of answer.events(following)) {
          if (event.type === "failed") return event.error;
          encoder.add(event);
          await progress?.event(event);
        }
        const shutdown = options.shutdown();
        if (shutdown) return shutdown;
        if (!encoder.finished) return new ClientClosedError();
        const sent = encoder.sent();
        const usage = run.meter.countsTokens || trace.recording ? run.usage(sent) : undefined;
        usage?.catch(() => undefined);
        trace.delivered(sent, usage);
        return encoder;
      } catch (error) {
        return options.shutdown() ?? toAdapterError(error);
      } finally {
        progress?.done();
      }
    },
  };
}
