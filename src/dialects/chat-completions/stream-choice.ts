import type { ChunkDelta } from "./chat-completion.js";
import type { QuerySnapshot } from "../../core/query-snapshot.js";
import type { MessageOptions, StepsOutput } from "./build-message.js";
import { THINK_CLOSE, THINK_OPEN } from "./build-message.js";
import { citeSources } from "../../answer/cite-sources.js";
import { codePointLength } from "../../answer/code-points.js";
import { renderStepsDelta } from "../../answer/render-steps.js";
import { sourcesFooter } from "../../answer/sources-footer.js";

/**
 * What one streamed choice has sent so far: the explicit per-choice state of the stream
 * translator. The final annotations are computed over exactly the content the client received.
 */
export interface ChoiceStreamState {
  stepsSent: number;
  /** Reasoning sent as `reasoning_content` (or inside `<think>` in the content). */
  reasoning: string;
  /** Content sent before the output: the `<think>` block when steps go into the content. */
  prefix: string;
  thinkOpen: boolean;
  /** Output sent as `content`. */
  output: string;
  /** The Markdown Sources list sent after the output (citation style `markdown`). */
  footer: string;
}

/** A fresh state, for a choice whose role chunk has just been sent. */
export function newChoiceStream(): ChoiceStreamState {
  return { stepsSent: 0, reasoning: "", prefix: "", thinkOpen: false, output: "", footer: "" };
}

/** The first delta of every choice, as OpenAI sends it. */
export const ROLE_DELTA: ChunkDelta = { role: "assistant", content: "" };

/**
 * The deltas that bring a client from what it has to `snapshot` (docs/upstream-assumptions.md#steps):
 * new steps as reasoning, output growth as content. Output that does not extend what was sent
 * (the upstream rewrote it) cannot be taken back, so it waits for the final snapshot.
 */
export function advanceChoice(state: ChoiceStreamState, snapshot: QuerySnapshot, stepsOutput: StepsOutput): ChunkDelta[] {
  const deltas: ChunkDelta[] = [];
  if (stepsOutput !== "none" && snapshot.steps.length > state.stepsSent) {
    const text = renderStepsDelta(snapshot.steps, state.stepsSent);
    state.stepsSent = snapshot.steps.length;
    if (text && stepsOutput === "reasoning") {
      state.reasoning += text;
      deltas.push({ reasoning_content: text });
    } else if (text && state.output === "") {
      // Steps in the content lead it inside <think>; a step after the output began is left out.
      const opening = state.thinkOpen ? "" : THINK_OPEN;
      state.thinkOpen = true;
      state.reasoning += text;
      state.prefix += opening + text;
      deltas.push({ content: opening + text });
    }
  }
  if (snapshot.output.length > state.output.length && snapshot.output.startsWith(state.output)) {
    let growth = snapshot.output.slice(state.output.length);
    // Never send half of a surrogate pair: hold a trailing high surrogate back for the next delta.
    const last = growth.charCodeAt(growth.length - 1);
    if (last >= 0xd800 && last <= 0xdbff && snapshot.status !== "PROCESSED") growth = growth.slice(0, -1);
    if (growth) {
      const closing = closeThink(state);
      state.output += growth;
      deltas.push({ content: closing + growth });
    }
  }
  return deltas;
}

/**
 * The deltas that end a PROCESSED choice: the rest of the output (and the Markdown Sources list
 * when that citation style is on), then annotations and sources
 * complete in one delta (the OpenAI SDK's stream helper keeps only the last value of delta keys
 * it does not know, so they must not be split across chunks).
 */
export function finishChoice(state: ChoiceStreamState, snapshot: QuerySnapshot, options: MessageOptions): ChunkDelta[] {
  const deltas = advanceChoice(state, snapshot, options.stepsOutput);
  const closing = closeThink(state);
  if (closing) deltas.push({ content: closing });
  const { annotations, sources } = citeSources(state.output, snapshot.sources, codePointLength(state.prefix));
  state.footer = sourcesFooter(state.output, sources, options.citationStyle);
  if (state.footer) deltas.push({ content: state.footer });
  deltas.push({ annotations, sources });
  return deltas;
}

function closeThink(state: ChoiceStreamState): string {
  if (!state.thinkOpen) return "";
  state.thinkOpen = false;
  state.prefix += THINK_CLOSE;
  return THINK_CLOSE;
}
