import type { DocumentLinkSigning } from "../../answer/source-links.js";
import type { Mode } from "../../core/modes.js";
import type { BackgroundResponses } from "../../continuity/background/background-responses.js";
import type { ThreadScope } from "../../continuity/threads/thread-keys.js";
import type { ThreadHints, ThreadMemory } from "../../continuity/threads/thread-memory.js";
import { ResponseBodyEncoder } from "../../dialects/responses/response-body-encoder.js";
import type { ResponseRequest } from "../../dialects/responses/response-request.js";
import { ResponseStreamEncoder } from "../../dialects/responses/response-stream-encoder.js";
import type { Clock } from "../../util/clock.js";
import type { Admitted } from "../admission.js";
import { background } from "../delivery/background-delivery.js";
import type { BeforeAnswerEnds, Delivery, HttpTarget } from "../delivery/delivery.js";
import { json } from "../delivery/json-delivery.js";
import { sse } from "../delivery/stream-delivery.js";
import type { KeepAliveSweep } from "../sse-writer.js";
import type { FinishedAnswer, ResponseTurns, Turn } from "./response-turns.js";
import { isResponseTerminal } from "./responses-resumption.js";

/** What a response's delivery writes with: the encoders' links and clock, and the stores its turn goes to. */
export interface ResponseDeliveryOptions {
  threads: ThreadMemory;
  turns: ResponseTurns;
  background: BackgroundResponses;
  documentLinks?: DocumentLinkSigning | undefined;
  clock: Clock;
}

/** Where a response's turn goes in the thread memory: its scope, what names its thread, its prompt, the handles it gave out. */
export interface ThreadTurnPlace {
  scope: ThreadScope;
  hints: ThreadHints;
  promptIndex: number;
  handles: string[];
}

/** One planned response to deliver: its request, the turn to store, its query's mode and prompt, and where it goes. */
export interface PlannedResponse {
  body: ResponseRequest;
  turn: Turn;
  mode: Mode;
  prompt: string;
  thread: ThreadTurnPlace;
  /** Its admission: a background answer holds it until it ends. */
  admission: Admitted;
  target: HttpTarget;
  sweep: KeepAliveSweep;
}

/**
 * What a response's answer remembers before its last bytes, whatever its transport: its thread's
 * turn (the thread memory), and the stored response with its conversation's items.
 */
export function rememberTurn(
  options: Pick<ResponseDeliveryOptions, "threads" | "turns">,
  turn: Turn,
  thread: ThreadTurnPlace,
  encoder: FinishedAnswer,
): BeforeAnswerEnds {
  return async (sent) => {
    const answer = sent[0]?.content ?? "";
    const { scope, hints, promptIndex, handles } = thread;
    const remembered = options.threads.remember(scope, hints, { promptIndex, answer, queryId: turn.queryId, handles });
    await Promise.all([remembered, options.turns.store(turn, encoder)]);
  };
}

/**
 * The delivery of a response (docs/responses-api.md): one body, a stream, or a background answer
 * (its stream into an event log any replica follows); and what its answer remembers before its
 * last bytes: its thread's turn, and the stored response with its conversation's items.
 */
export function responseDelivery(
  options: ResponseDeliveryOptions,
  planned: PlannedResponse,
): { delivery: Delivery<unknown>; remember: BeforeAnswerEnds } {
  const { body, turn, target } = planned;
  const seconds = () => Math.floor(options.clock.now() / 1000);
  const { delivery, encoder } = deliveryOf();
  return { delivery, remember: rememberTurn(options, turn, planned.thread, encoder) };

  function deliveryOf(): { delivery: Delivery<unknown>; encoder: FinishedAnswer } {
    const { meta } = turn;
    if (!body.stream && !body.background) {
      const encoder = new ResponseBodyEncoder(meta, seconds, options.documentLinks);
      return { delivery: json(encoder, target), encoder };
    }
    const encoder = new ResponseStreamEncoder(meta, seconds, options.documentLinks);
    if (!body.background) return { delivery: sse(encoder, target, planned.sweep), encoder };
    const resume = { mode: planned.mode, prompt: planned.prompt, turn };
    const record = { id: turn.id, principal: turn.principal, workspace: turn.workspace, queryId: turn.queryId, resume };
    const follow = body.stream ? planned.sweep : undefined;
    const job = { responses: options.background, record, admission: planned.admission, follow, isTerminal: isResponseTerminal };
    return { delivery: background(encoder, job, target), encoder };
  }
}
