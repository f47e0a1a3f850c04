import type { ChoiceSent, TokenUsage } from "../../answer/answer-events.js";
import type { DocumentLinkSigning } from "../../answer/source-links.js";
import { type Annotate, annotatorOf } from "./response-annotations.js";
import type { ResponseMeta } from "./response-meta.js";
import type { ResponseObject } from "./response-object.js";
import { type ResponseEnd, responseOf } from "./response-of.js";
import { newResponseState, type ResponseState } from "./response-state.js";

/** What both Responses encoders report they sent, and keep of a finished answer for the store. */
export abstract class ResponseEncoding {
  protected readonly state = newResponseState();
  /** Writes the citations in the response's format (`meta.citations`). */
  protected readonly annotate: Annotate;
  /** The finished response object, once there is one. */
  finished: ResponseObject | undefined;
  /** The usage counted for it. */
  usage: TokenUsage | undefined;

  constructor(
    readonly meta: ResponseMeta,
    /** Seconds since the epoch, for `completed_at`. */
    protected readonly now: () => number,
    /** Signs links to the adapter's document page where it asks for a key (listed keys). */
    signing?: DocumentLinkSigning,
  ) {
    this.annotate = annotatorOf(meta.citations, signing);
  }

  sent(): ChoiceSent[] {
    return [{ content: this.state.text, reasoning: this.state.reasoning }];
  }

  /** The answer as the core gave it: what a stored response replays its events from. */
  get answer(): Pick<ResponseState, "reasoning" | "text" | "citations" | "sources"> {
    const { reasoning, text, citations, sources } = this.state;
    return { reasoning, text, citations, sources };
  }

  /** The response as it stands: in progress with what was sent so far, or ended without completing (failed, cancelled). */
  current(end: Exclude<ResponseEnd, { status: "completed" }> | null = null): ResponseObject {
    return responseOf(this.meta, this.state, end);
  }

  protected complete(usage: TokenUsage): ResponseObject {
    this.usage = usage;
    this.finished = responseOf(this.meta, this.state, { status: "completed", usage, at: this.now() });
    return this.finished;
  }
}
