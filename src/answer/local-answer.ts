import { UNTRACED_ANSWER } from "../telemetry/answer-trace.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { AnswerEvent } from "./answer-events.js";
import { countUsage } from "./count-usage.js";
import type { RunningAnswer } from "./running-answer.js";

/** An answer the adapter gives itself, without the workspace (a chat UI's housekeeping). */
export interface LocalAnswerJob {
  /** What usage counts as the prompt: the request's last message, as it was received. */
  prompt: string;
  /** The whole reply of each choice. */
  text: string;
  /** `n`: every choice gets the same reply. */
  choices: number;
  /** Stands where a query id would (a completion's id is made from it); never sent upstream. */
  id: string;
}

/**
 * A `RunningAnswer` whose events come from the adapter instead of the workspace
 * (docs/architecture/runner.md#local-answers): per choice its text, no citations, and
 * `finished`, so that the dialects' encoders and the writer deliver it exactly as a workspace
 * answer — JSON or a stream, `usage`, `include_usage` — with nothing created upstream and no
 * trace of its own. Usage is counted as for any answer (o200k, the prompt once per choice).
 */
export function localAnswer(job: LocalAnswerJob, tokens: TokenCounter): RunningAnswer {
  async function* events(): AsyncGenerator<AnswerEvent> {
    for (let choice = 0; choice < job.choices; choice += 1) {
      if (job.text) yield { type: "text", choice, text: job.text };
      yield { type: "cited", choice, citations: [], sources: [] };
      yield { type: "finished", choice, queryId: job.id, usage: undefined };
    }
  }
  return {
    queryIds: Array.from({ length: job.choices }, () => job.id),
    trace: UNTRACED_ANSWER,
    events,
    usage: (sent) =>
      countUsage(
        sent.map((choice) => ({ prompt: job.prompt, content: choice.content, reasoning: choice.reasoning })),
        tokens,
      ),
  };
}
