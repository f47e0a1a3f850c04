import type { AnswerEvent, ChoiceSent, TokenUsage } from "../../answer/answer-events.js";
import type { SourceLinker } from "../../answer/source-links.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { AdapterError } from "../../errors/adapter-error.js";
import { AnswerToolEncoder, answerResult, toolError } from "./encode-tool-result.js";
import { progressOf, type TaskResume, type TaskState } from "./task-state.js";

/** The end a background answer's log reports to its encoder (`BackgroundEncoder.current`). */
type Ending = { status: "failed"; error: AdapterError; at: number } | null;

/**
 * An answer tool's answer as an MCP task (docs/mcp.md#long-answers-as-tasks), the background
 * encoder of its event log: pure. The log holds one frame per new step (so any replica reads the
 * latest step as the task's `statusMessage`), and the end; the text is gathered here and the
 * tool result, whole, goes into the record's final object. Brought to the end of a log by
 * `TaskEncoder.resumed`, it numbers the next frame as the log's next.
 */
export class TaskEncoder {
  readonly needsUsage = false;
  private readonly tool: AnswerToolEncoder;
  private next = 0;
  private reasoning = "";
  private lastStep: string | undefined;
  private done: TaskState | undefined;

  constructor(
    private readonly head: TaskResume,
    private readonly links: SourceLinker,
    private readonly now: () => number,
  ) {
    this.tool = new AnswerToolEncoder(head.mode, links);
  }

  /** An encoder brought to the end of a task's log (a takeover): its steps known, its next frame numbered after the log's last. */
  static resumed(head: TaskResume, links: SourceLinker, now: () => number, frames: readonly SseFrame[]): TaskEncoder {
    const encoder = new TaskEncoder(head, links, now);
    const progress = progressOf(frames);
    encoder.next = frames.length;
    encoder.reasoning = progress.reasoning;
    encoder.lastStep = progress.lastStep;
    if (progress.steps.length > 0) encoder.tool.add({ type: "reasoning", choice: 0, text: progress.reasoning, steps: progress.steps });
    return encoder;
  }

  open(): SseFrame[] {
    return [this.frame("task.working", {})];
  }

  encode(event: AnswerEvent): SseFrame[] {
    this.tool.add(event);
    if (event.type !== "reasoning" || event.steps.length === 0) return [];
    this.reasoning += event.text;
    this.lastStep = event.steps.at(-1);
    return [this.frame("task.step", { steps: event.steps, text: event.text })];
  }

  /** What the answer sent: its text (once gathered) and its steps as reasoning text, as a takeover's follow and usage read them. */
  sent(): ChoiceSent[] {
    return [{ content: this.tool.finished ? this.tool.output().answer : "", reasoning: this.reasoning }];
  }

  close(_usage: TokenUsage | undefined): SseFrame[] {
    const result = answerResult(this.tool.output(), this.links, this.head.cardWorkspace);
    this.done = { ...this.state("completed"), result };
    return [this.frame("task.completed", {})];
  }

  fail(error: AdapterError): SseFrame[] {
    return [this.frame("task.failed", { message: error.message })];
  }

  /** The task's object as it stands: working, or failed as the tool error `tools/call` would have returned. */
  current(end: Ending): TaskState {
    if (end === null) return this.state("working");
    const { message } = end.error;
    return { ...this.state("failed"), statusMessage: message, error: { message }, result: toolError(message) };
  }

  /** The task's final object once `close` made it complete. */
  get finished(): TaskState | undefined {
    return this.done;
  }

  private state(status: TaskState["status"]): TaskState {
    const { createdAt, ttlMs, pollIntervalMs } = this.head;
    const statusMessage = this.lastStep;
    const lastUpdatedAt = new Date(this.now()).toISOString();
    return { status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, ...(statusMessage ? { statusMessage } : {}) };
  }

  private frame(type: string, fields: Record<string, unknown>): SseFrame {
    const sequence = this.next;
    this.next += 1;
    return { event: type, data: { type, sequence_number: sequence, at: new Date(this.now()).toISOString(), ...fields } };
  }
}
