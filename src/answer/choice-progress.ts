import type { QuerySnapshot } from "../core/query-snapshot.js";
import type { AnswerEvent } from "./answer-events.js";
import { citeSources } from "./cite-sources.js";
import { renderNewSteps, renderSteps } from "./render-steps.js";

/** What the core has told the encoder of one choice so far: the explicit state of the translation. */
export interface ChoiceProgress {
  readonly choice: number;
  stepsSeen: number;
  /** The output sent as `text` events: what citations are computed over. */
  text: string;
}

/** A fresh progress, for a choice whose query was just created. */
export function newProgress(choice: number): ChoiceProgress {
  return { choice, stepsSeen: 0, text: "" };
}

/** What an encoder was already sent of a choice another replica began (docs/responses-api.md#background-mode). */
export interface SentSoFar {
  text: string;
  reasoning: string;
}

/**
 * How many of `steps` (the first ones) render to the reasoning already sent: a query followed
 * again after another replica sent part of its answer goes on from there.
 */
export function stepsSent(steps: readonly unknown[], reasoning: string): number {
  let seen = 0;
  for (let count = 1; count <= steps.length; count += 1) {
    if (renderSteps(steps.slice(0, count)).length > reasoning.length) break;
    seen = count;
  }
  return seen;
}

/**
 * The events that bring an encoder from what it has to `snapshot` (docs/upstream-assumptions.md#steps):
 * new steps as reasoning, output growth as text. Output that does not extend what was sent (the
 * upstream rewrote it) cannot be taken back, so it waits for the final snapshot; a trailing high
 * surrogate waits for its pair.
 */
export function advance(progress: ChoiceProgress, snapshot: QuerySnapshot): AnswerEvent[] {
  const events = advanceSteps(progress, snapshot);
  const { choice } = progress;
  if (snapshot.output.length > progress.text.length && snapshot.output.startsWith(progress.text)) {
    let growth = snapshot.output.slice(progress.text.length);
    const last = growth.charCodeAt(growth.length - 1);
    if (last >= 0xd800 && last <= 0xdbff && snapshot.status !== "PROCESSED") growth = growth.slice(0, -1);
    if (growth) {
      progress.text += growth;
      events.push({ type: "text", choice, text: growth });
    }
  }
  return events;
}

/**
 * The reasoning event of the steps `snapshot` adds, if any: for an answer whose text is sent whole
 * at the end but whose steps are reported as they come.
 */
export function advanceSteps(progress: ChoiceProgress, snapshot: QuerySnapshot): AnswerEvent[] {
  if (snapshot.steps.length <= progress.stepsSeen) return [];
  const { text, each: steps } = renderNewSteps(snapshot.steps, progress.stepsSeen);
  progress.stepsSeen = snapshot.steps.length;
  return text ? [{ type: "reasoning", choice: progress.choice, text, steps }] : [];
}

/**
 * The events that end a PROCESSED choice: the rest of the output, then its citations over
 * exactly the text sent (docs/upstream-assumptions.md#sources-and-citations), then `finished`.
 */
export function finish(progress: ChoiceProgress, snapshot: QuerySnapshot): AnswerEvent[] {
  const events = advance(progress, snapshot);
  const { citations, sources } = citeSources(progress.text, snapshot.sources);
  events.push(
    { type: "cited", choice: progress.choice, citations, sources },
    { type: "finished", choice: progress.choice, queryId: snapshot.id, usage: snapshot.usage },
  );
  return events;
}
