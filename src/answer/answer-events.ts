import type { CitedSource } from "../core/source-record.js";
import type { UpstreamUsage } from "../core/usage.js";
import type { AdapterError } from "../errors/adapter-error.js";

/**
 * A citation marker in an answer, dialect-neutral: the source it points at (an index into the
 * answer's `sources`), that source's display name, and the marker's span in code points over the
 * answer text as the client received it (end exclusive). Encoders shift it past anything they put
 * before the answer (a `<think>` block) and shape it (file_citation, url_citation, Markdown).
 */
export interface Citation {
  source: number;
  filename: string;
  start: number;
  end: number;
}

/**
 * What the answer core tells a dialect encoder, per choice, in order (docs/architecture/runner.md#the-answer-events):
 * `reasoning` and `text` any number of times as the query runs, then for a choice that ends
 * well `cited` and `finished`; `failed` ends the whole answer (a FAILED query, a deadline, an
 * upstream error after the queries were created).
 */
export type AnswerEvent =
  /**
   * Steps rendered as reasoning text, appended to what came before (separators included); `steps`
   * are the same new steps one by one (what a dialect that reports each step on its own needs).
   */
  | { type: "reasoning"; choice: number; text: string; steps: string[] }
  /** Output appended to what came before: never half of a surrogate pair, never taken back. */
  | { type: "text"; choice: number; text: string }
  /** The citations of the whole text sent, and every source of the answer with `cited`. */
  | { type: "cited"; choice: number; citations: Citation[]; sources: CitedSource[] }
  /** The choice's query ended PROCESSED; `usage` is what the upstream reported, if anything. */
  | { type: "finished"; choice: number; queryId: string; usage: UpstreamUsage | undefined }
  | { type: "failed"; error: AdapterError };

/** Token counts of a whole answer (docs/upstream-assumptions.md#usage), for each dialect to shape. */
export interface TokenUsage {
  promptTokens: number;
  /** Everything returned: content and reasoning. */
  completionTokens: number;
  /** The reasoning part of `completionTokens`. */
  reasoningTokens: number;
}

/** What one choice sent to its client, as the encoder reports it: what usage counts. */
export interface ChoiceSent {
  content: string;
  reasoning: string;
}
