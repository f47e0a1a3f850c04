import type { StreamEncoder } from "../../answer/answer-encoder.js";
import type { AnswerEvent, TokenUsage } from "../../answer/answer-events.js";
import type { SseFrame } from "../../core/sse-frame.js";
import { type AdapterError, GatewayTimeoutError, QueryFailedError, StructuredOutputError } from "../../errors/adapter-error.js";
import { ResponseEncoding } from "./response-encoding.js";
import { functionCallItem, itemIdOf, messageItem, outputText, reasoningItem, responseOf } from "./response-of.js";
import { applyEvent, openMessage } from "./response-state.js";

/**
 * Encodes a streamed answer as the Responses API's named events, each with a rising
 * `sequence_number`: `response.created` and `response.in_progress`; the reasoning item's summary
 * as it grows; the message item's text as it grows; one `response.output_text.annotation.added`
 * per citation; the items' `done` events; `response.completed` with the whole response and its
 * usage. A forced function's answer is its `function_call` item instead of the message, its
 * arguments as `response.function_call_arguments.delta` and `.done` (docs/structured-answers.md). A FAILED query or a deadline is `response.failed`; any other failure after the stream
 * began an `error` event. No custom event types: the openai SDK's stream helper throws on them.
 */
export class ResponseStreamEncoder extends ResponseEncoding implements StreamEncoder {
  readonly needsUsage = true;
  private sequence = 0;

  open(): SseFrame[] {
    const response = responseOf(this.meta, null, null);
    return [this.frame("response.created", { response }), this.frame("response.in_progress", { response })];
  }

  encode(event: AnswerEvent): SseFrame[] {
    const { state } = this;
    const frames: SseFrame[] = [];
    if (event.type === "reasoning") {
      if (state.messageOpen) return frames;
      if (!state.reasoningOpen) {
        applyEvent(state, { ...event, text: "" }, this.annotate);
        const at = this.indexOf("reasoning");
        frames.push(
          this.frame("response.output_item.added", { output_index: at, item: { type: "reasoning", id: itemIdOf(this.meta, "rs"), summary: [] } }),
          this.frame("response.reasoning_summary_part.added", {
            item_id: itemIdOf(this.meta, "rs"),
            output_index: at,
            summary_index: 0,
            part: { type: "summary_text", text: "" },
          }),
        );
      }
      applyEvent(state, event, this.annotate);
      frames.push(
        this.frame("response.reasoning_summary_text.delta", {
          item_id: itemIdOf(this.meta, "rs"),
          output_index: this.indexOf("reasoning"),
          summary_index: 0,
          delta: event.text,
        }),
      );
      return frames;
    }
    const { call } = this.meta;
    if (call) return this.encodeCall(event, call.name);
    if (event.type === "text") {
      frames.push(...this.startMessage());
      applyEvent(state, event, this.annotate);
      frames.push(this.frame("response.output_text.delta", { ...this.textPosition(), delta: event.text, logprobs: [] }));
      return frames;
    }
    if (event.type === "cited") {
      frames.push(...this.startMessage());
      applyEvent(state, event, this.annotate);
      state.annotations.forEach((annotation, index) => {
        frames.push(this.frame("response.output_text.annotation.added", { ...this.textPosition(), annotation_index: index, annotation }));
      });
      const part = outputText(state);
      frames.push(
        this.frame("response.output_text.done", { ...this.textPosition(), text: state.text, logprobs: [] }),
        this.frame("response.content_part.done", { ...this.textPosition(), part }),
        this.frame("response.output_item.done", { output_index: this.indexOf("message"), item: messageItem(this.meta, state) }),
      );
    }
    return frames;
  }

  close(usage: TokenUsage | undefined): SseFrame[] {
    return [this.frame("response.completed", { response: this.complete(usage ?? { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 }) })];
  }

  fail(error: AdapterError): SseFrame[] {
    // The answer itself failed (a FAILED query, a deadline, JSON that never matched the schema): the response fails.
    if (error instanceof QueryFailedError || error instanceof GatewayTimeoutError || error instanceof StructuredOutputError) {
      return [this.frame("response.failed", { response: responseOf(this.meta, this.state, { status: "failed", error, at: this.now() }) })];
    }
    // OpenAI's error event has its fields at the top, Open Responses' in `error`: both, so that either reader finds them.
    const { code, message, param } = error;
    return [this.frame("error", { code, message, param, error: { type: error.type, code, message, param } })];
  }

  /** A forced function's call: opened with its first arguments, done with its sources (`cited`, the answer's end). */
  private encodeCall(event: AnswerEvent, name: string): SseFrame[] {
    const { state } = this;
    if (event.type !== "text" && event.type !== "cited") return [];
    const frames = state.messageOpen ? [] : this.closeReasoning();
    const position = () => ({ item_id: itemIdOf(this.meta, "fc"), output_index: this.indexOf("message") });
    if (!state.messageOpen) {
      openMessage(state);
      frames.push(this.frame("response.output_item.added", { output_index: this.indexOf("message"), item: functionCallItem(this.meta, state, name) }));
    }
    applyEvent(state, event, this.annotate);
    if (event.type === "text") return [...frames, this.frame("response.function_call_arguments.delta", { ...position(), delta: event.text })];
    return [
      ...frames,
      this.frame("response.function_call_arguments.done", { ...position(), name, arguments: state.text }),
      this.frame("response.output_item.done", { output_index: this.indexOf("message"), item: functionCallItem(this.meta, state, name) }),
    ];
  }

  /** Closes the reasoning item, if open: the answer's item follows. */
  private closeReasoning(): SseFrame[] {
    const { state } = this;
    if (!state.reasoningOpen) return [];
    const position = { item_id: itemIdOf(this.meta, "rs"), output_index: this.indexOf("reasoning"), summary_index: 0 };
    return [
      this.frame("response.reasoning_summary_text.done", { ...position, text: state.reasoning }),
      this.frame("response.reasoning_summary_part.done", { ...position, part: { type: "summary_text", text: state.reasoning } }),
      this.frame("response.output_item.done", { output_index: position.output_index, item: reasoningItem(this.meta, state) }),
    ];
  }

  /** Closes the reasoning item, then opens the message item (once). */
  private startMessage(): SseFrame[] {
    const { state } = this;
    if (state.messageOpen) return [];
    const frames = this.closeReasoning();
    openMessage(state);
    const at = this.indexOf("message");
    frames.push(
      this.frame("response.output_item.added", {
        output_index: at,
        item: { type: "message", id: itemIdOf(this.meta, "msg"), status: "in_progress", role: "assistant", content: [], phase: "final_answer" },
      }),
      this.frame("response.content_part.added", { ...this.textPosition(), part: { type: "output_text", text: "", annotations: [], logprobs: [] } }),
    );
    return frames;
  }

  private textPosition() {
    return { item_id: itemIdOf(this.meta, "msg"), output_index: this.indexOf("message"), content_index: 0 };
  }

  private indexOf(kind: "reasoning" | "message"): number {
    return this.state.order.indexOf(kind);
  }

  private frame(type: string, fields: Record<string, unknown>): SseFrame {
    const data = { type, sequence_number: this.sequence, ...fields };
    this.sequence += 1;
    return { event: type, data };
  }
}
