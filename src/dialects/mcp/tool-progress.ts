import type { AnswerEvent } from "../../answer/answer-events.js";

/** The params of one `notifications/progress` (`progress` grows with every notification of a call). */
export interface ProgressParams {
  progressToken: string | number;
  progress: number;
  message: string;
}

/**
 * The progress notifications of one tool call whose request carried a `progressToken`
 * (docs/architecture/mcp.md#mcp-tools): one when the workspace query started, one per workspace step
 * with the step's text as `message`, and a sign of life while nothing happens (so clients that
 * reset their timeout on progress keep waiting for a long `reason` or `build`). Pure: the runner
 * sends what it returns.
 */
export class ToolProgress {
  private count = 0;

  constructor(private readonly token: string | number) {}

  /** The notification that the workspace query exists and runs. */
  started(queryId: string, mode: string): ProgressParams {
    return this.next(`Asked the workspace (${mode} query ${queryId})`);
  }

  /** One notification per new step of the answer. */
  of(event: AnswerEvent): ProgressParams[] {
    return event.type === "reasoning" ? event.steps.map((step) => this.next(step)) : [];
  }

  /** A sign of life after a silence: how long the query has run. */
  waiting(elapsedMs: number): ProgressParams {
    return this.next(`Still working (${Math.round(elapsedMs / 1000)} s)`);
  }

  private next(message: string): ProgressParams {
    this.count += 1;
    return { progressToken: this.token, progress: this.count, message };
  }
}
