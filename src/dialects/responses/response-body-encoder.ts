import type { BodyEncoder } from "../../answer/answer-encoder.js";
import type { AnswerEvent, TokenUsage } from "../../answer/answer-events.js";
import type { ResponseObject } from "./response-object.js";
import { ResponseEncoding } from "./response-encoding.js";
import { applyEvent } from "./response-state.js";

/** Encodes a non-streamed answer as one response object. */
export class ResponseBodyEncoder extends ResponseEncoding implements BodyEncoder<ResponseObject> {
  add(event: AnswerEvent): void {
    applyEvent(this.state, event, this.annotate);
  }

  body(usage: TokenUsage): ResponseObject {
    return this.complete(usage);
  }
}
