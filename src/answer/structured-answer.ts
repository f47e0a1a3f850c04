import type { AnswerEvent, ChoiceSent, TokenUsage } from "./answer-events.js";
import type { Following, RunningAnswer } from "./running-answer.js";
import { STEP_SEPARATOR } from "./render-steps.js";
import type { SourceRecord } from "../core/source-record.js";
import { StructuredOutputError, toAdapterError } from "../errors/adapter-error.js";
import { repairInstructions } from "../structured/instruction-block.js";
import { judgeAnswer } from "./judge-answer.js";
import type { SchemaService } from "../structured/schema-service.js";
import type { StructuredRequest } from "../structured/structured-request.js";

/** The turns of a structured answer: the first, running, and how to start the repair turn in the same thread. */
export interface StructuredTurns {
  first: RunningAnswer;
  /** Starts one more turn of the same workspace query, with `content` (the repair prompt). */
  repair(content: string): Promise<RunningAnswer>;
}

/** What judging an answer needs besides the turns. */
export interface StructuredOptions {
  validation: SchemaService;
  /** Whether markers leave the JSON's strings (`X-Structured-Citations: strip`). */
  strip: boolean;
}

/** What one turn gave: its output whole, its sources, its reasoning, and what counts for its usage. */
interface TurnRecord {
  answer: RunningAnswer;
  output: string;
  reasoning: string;
  sources: SourceRecord[];
}

/**
 * A structured answer as a running answer (docs/structured-answers.md#what-comes-back): the first
 * turn's steps go out as reasoning as they come, its text is held; when it ends, the JSON is taken
 * out and validated; if it does not match and asking again can help, the repair turn runs in the
 * same thread (its steps go out too) and is judged the same way. The encoder then gets one `text`
 * event with the JSON, its `cited` (spans over the JSON) and `finished`; or a `failed` with the
 * 400 `structured_output_failed` (`StructuredOutputError`). Usage is the sum of the turns: each counts its prompt, and what it
 * produced (a discarded turn's whole output, the delivered turn's JSON).
 */
export function structuredAnswer(turns: StructuredTurns, request: StructuredRequest, options: StructuredOptions): RunningAnswer {
  const records: TurnRecord[] = [];
  let delivered = "";
  return {
    queryIds: turns.first.queryIds,
    trace: turns.first.trace,
    async *events(following: Following): AsyncGenerator<AnswerEvent> {
      // The text is held whatever the client follows: only the steps can go out as they come.
      const turnFollowing: Following = following === "final" ? "final" : "steps";
      let problem = "";
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        let answer = turns.first;
        if (attempt > 1) {
          try {
            answer = await turns.repair(repairInstructions(problem, request));
          } catch (error) {
            // The repair turn could not be created (the upstream refused it, or the client left).
            yield { type: "failed", error: toAdapterError(error) };
            return;
          }
        }
        const record: TurnRecord = { answer, output: "", reasoning: "", sources: [] };
        records.push(record);
        let last: Extract<AnswerEvent, { type: "finished" }> | undefined;
        for await (const event of answer.events(turnFollowing)) {
          if (event.type === "failed") {
            yield event;
            return;
          }
          if (event.type === "reasoning") {
            const separator = attempt > 1 && record.reasoning === "" && records[0]?.reasoning ? STEP_SEPARATOR : "";
            record.reasoning += event.text;
            yield { ...event, choice: 0, text: separator + event.text };
          } else if (event.type === "text") record.output += event.text;
          else if (event.type === "cited") record.sources = event.sources;
          else if (event.type === "finished") last = event;
        }
        // The client left (the events ended without the turn's end): end quietly, as the answer core does.
        if (!last) return;
        const judged = await judgeAnswer(record.output, record.sources, request, options.validation, options.strip);
        if (judged.valid) {
          delivered = judged.json;
          yield { type: "text", choice: 0, text: judged.json };
          yield { type: "cited", choice: 0, citations: judged.citations, sources: judged.sources };
          yield { ...last, choice: 0 };
          return;
        }
        problem = judged.problem;
        if (!judged.repairable) break;
      }
      yield { type: "failed", error: failure(request, problem, records.length) };
    },
    async usage(sent: readonly ChoiceSent[]): Promise<TokenUsage> {
      const reasoningSent = sent[0]?.reasoning ?? "";
      const counted = await Promise.all(
        records.map((record, index) => {
          const last = index === records.length - 1;
          const content = last && delivered ? delivered : record.output;
          // The reasoning the encoder sent is the turns' reasoning in order: each turn counts its own.
          const reasoning = reasoningSent === "" ? "" : record.reasoning;
          return record.answer.usage([{ content, reasoning }]);
        }),
      );
      return counted.reduce(
        (sum, usage) => ({
          promptTokens: sum.promptTokens + usage.promptTokens,
          completionTokens: sum.completionTokens + usage.completionTokens,
          reasoningTokens: sum.reasoningTokens + usage.reasoningTokens,
        }),
        { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
      );
    },
  };
}

/** What the answer was asked to be, as the failure's message names it. */
function askedFor(request: StructuredRequest): string {
  if (request.kind === "function") return `the arguments of the function '${request.name ?? ""}'`;
  if (request.kind === "json_object") return "a JSON object";
  return request.name ? `the schema '${request.name}'` : "the schema";
}

/** The failure (docs/structured-answers.md#failure-modes): the parameter that asked, and the last problem. */
function failure(request: StructuredRequest, problem: string, turns: number): StructuredOutputError {
  const attempts = turns === 1 ? "(asking again could not help)" : "after 2 attempts";
  return new StructuredOutputError(`The workspace's answer did not match ${askedFor(request)} ${attempts}: ${problem}`, request.param);
}
