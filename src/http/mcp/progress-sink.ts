import type { Mode } from "../../core/modes.js";
import { ToolProgress } from "../../dialects/mcp/tool-progress.js";
import type { ProgressSink } from "../delivery/collect-delivery.js";
import type { Beating, KeepAliveSweep } from "../sse-writer.js";
import type { ToolCall } from "./tool-server.js";

/**
 * The progress notifications of a tool call that asked for them (`progressToken`), as the answer
 * runner's progress sink: the query started, each step, and a sign of life after a silence (the
 * sweep's beat), so that clients that reset their timeout on progress keep waiting.
 */
export function progressSink(call: ToolCall, token: string | number, mode: Mode, sweep: KeepAliveSweep): ProgressSink {
  const progress = new ToolProgress(token);
  const started = performance.now();
  const waiting: Beating = {
    lastWrite: started,
    beat: (now) => {
      waiting.lastWrite = now;
      void call.notify(progress.waiting(now - started)).catch(() => undefined);
    },
  };
  return {
    started: async (queryId) => {
      await call.notify(progress.started(queryId, mode)).catch(() => undefined);
      waiting.lastWrite = performance.now();
      sweep.add(waiting);
    },
    event: async (event) => {
      for (const params of progress.of(event)) {
        waiting.lastWrite = performance.now();
        await call.notify(params).catch(() => undefined);
      }
    },
    done: () => sweep.remove(waiting),
  };
}
