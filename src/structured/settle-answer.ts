import type { SourceRecord } from "../core/source-record.js";
import { StructuredOutputError } from "../errors/adapter-error.js";
import { repairInstructions } from "./instruction-block.js";
import { type Judgement, judgeAnswer } from "./judge-answer.js";
import type { SchemaValidation } from "./schema-validator.js";
import type { StructuredRequest } from "./structured-request.js";

/** One workspace turn's answer, whole: its output and the structured sources it came with. */
export interface TurnOutput {
  output: string;
  sources: readonly SourceRecord[];
}

/** A structured answer that matched, and how many workspace turns it took (1, or 2 with the repair). */
export type SettledAnswer = Extract<Judgement, { valid: true }> & { turns: 1 | 2 };

/** What settling needs besides the turns. */
export interface SettleOptions {
  validation: SchemaValidation;
  /** Whether markers leave the JSON's strings (`X-Structured-Citations: strip`). */
  strip: boolean;
}

/**
 * Settles a structured answer (docs/structured-answers.md#failure-modes): judges the first turn;
 * if it has no matching JSON and asking again can help, runs the repair turn (`repair`, one more
 * turn in the same workspace thread, with the content given) and judges that. Still no match is a
 * `StructuredOutputError` (the 422) naming the parameter that asked and the last problem.
 */
export async function settleAnswer(
  first: TurnOutput,
  repair: (content: string) => Promise<TurnOutput>,
  request: StructuredRequest,
  options: SettleOptions,
): Promise<SettledAnswer> {
  const judge = (turn: TurnOutput) => judgeAnswer(turn.output, turn.sources, request, options.validation, options.strip);
  const judged = judge(first);
  if (judged.valid) return { ...judged, turns: 1 };
  if (!judged.repairable) throw failure(request, judged.problem, 1);
  const second = judge(await repair(repairInstructions(judged.problem, request)));
  if (second.valid) return { ...second, turns: 2 };
  throw failure(request, second.problem, 2);
}

/** What the answer was asked to be, as the 422's message names it. */
function askedFor(request: StructuredRequest): string {
  if (request.kind === "function") return `the arguments of the function '${request.name ?? ""}'`;
  if (request.kind === "json_object") return "a JSON object";
  return request.name ? `the schema '${request.name}'` : "the schema";
}

function failure(request: StructuredRequest, problem: string, turns: number): StructuredOutputError {
  const what = askedFor(request);
  const attempts = turns === 1 ? "(asking again could not help)" : "after 2 attempts";
  return new StructuredOutputError(`The workspace's answer did not match ${what} ${attempts}: ${problem}`, request.param);
}
