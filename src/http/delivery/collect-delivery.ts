import type { AnswerEvent, ChoiceSent } from "../../answer/answer-events.js";
import { type AdapterError, ClientClosedError, toAdapterError } from "../../errors/adapter-error.js";
import type { Delivery } from "./delivery.js";

/** A dialect's encoder of an answer collected whole for a result (an MCP tool's). */
export interface CollectEncoder {
  add(event: AnswerEvent): void;
  /** Whether the answer ended (every query PROCESSED): only then is there a result to give. */
  readonly finished: boolean;
  sent(): ChoiceSent[];
}

/** Told of a collected answer's progress (MCP's progress notifications); its promises never reject. */
export interface ProgressSink {
  /** The query exists and runs. */
  started(queryId: string): Promise<void>;
  /** One event of the answer (its steps are progress). */
  event(event: AnswerEvent): Promise<void>;
  /** The answer ended, however. */
  done(): void;
}

/**
 * An answer collected whole for a result (an MCP tool call), with progress when the client asked
 * for it (the steps as they come, the output whole at the end). Never throws once started: a
 * failure, a shutdown or a client that left is returned as the error the result reports. A
 * shutdown aborts `controller` and is reported as itself.
 */
export function collect<Encoder extends CollectEncoder>(
  encoder: Encoder,
  options: { progress?: ProgressSink | undefined; shutdown: () => AdapterError | undefined },
): Delivery<Encoder | AdapterError> {
  const { progress } = options;
  const following = progress ? "steps" : "final";
  return {
    reportsUsage: false,
    async deliver(run) {
      const { answer, trace } = run;
      try {
        const [queryId = ""] = answer.queryIds;
        await progress?.started(queryId);
        for await (const event of answer.events(following)) {
          if (event.type === "failed") return event.error;
          encoder.add(event);
          await progress?.event(event);
        }
        const shutdown = options.shutdown();
        if (shutdown) return shutdown;
        if (!encoder.finished) return new ClientClosedError();
        const sent = encoder.sent();
        if (run.usageNeeded) run.usage(sent).catch(() => undefined);
        trace.delivered(sent, () => run.usage(sent));
        return encoder;
      } catch (error) {
        return options.shutdown() ?? toAdapterError(error);
      } finally {
        progress?.done();
      }
    },
  };
}
