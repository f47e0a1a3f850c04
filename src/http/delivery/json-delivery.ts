import type { BodyEncoder } from "../../answer/answer-encoder.js";
import { ClientClosedError } from "../../errors/adapter-error.js";
import { sendUncached } from "../error-response.js";
import { type Delivery, type HttpTarget, nameQueries } from "./delivery.js";

/**
 * A non-streamed answer as one JSON body (docs/architecture.md#data-flow-of-one-request): every
 * event into the dialect's encoder, usage counted over what it holds, one body. A `failed` event,
 * or an answer that never finished (the client left), is thrown for the edge to map.
 */
export function json<Body>(encoder: BodyEncoder<Body>, target: HttpTarget): Delivery<Body> {
  const { response } = target;
  return {
    reportsUsage: true,
    planned: (queryIds) => nameQueries(response, queryIds),
    async deliver(run) {
      const { answer } = run;
      let finished = 0;
      for await (const event of answer.events("final")) {
        if (event.type === "failed") throw event.error;
        if (event.type === "finished") finished += 1;
        encoder.add(event);
      }
      if (finished < answer.queryIds.length) throw new ClientClosedError();
      const sent = encoder.sent();
      const usage = await run.usage(sent);
      const body = encoder.body(usage);
      await run.remember?.(sent);
      sendUncached(response, body);
      run.trace.delivered(sent, usage);
      return body;
    },
  };
}
