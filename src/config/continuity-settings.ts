import { z } from "zod";
import { documented, integer, listOf } from "./variables.js";

/** The continuity section's variables: how long and how much of conversations and stored responses is kept. */
export const continuityVariables = z.object({
  CONVERSATION_TTL_SECONDS: documented(integer(7 * 24 * 3600, 1), "How long a conversation is remembered after its last turn"),
  CONVERSATION_MAX_ENTRIES: documented(integer(10_000, 1), "Bound of the in-process conversation memory"),
  CONVERSATION_ID_HEADERS: documented(z.string().default("x-conversation-id,x-openwebui-chat-id"), "Headers that carry a client conversation id"),
  RESPONSES_TTL_SECONDS: documented(integer(30 * 24 * 3600, 1), "How long a stored response (`store` not false) can be retrieved and continued"),
  RESPONSES_MAX_ENTRIES: documented(integer(10_000, 1), "Bound of the in-process response store (Redis holds them when configured)"),
});

/** The continuity section's variables as validated. */
export type ContinuityVariables = z.output<typeof continuityVariables>;

/** The continuity section as the adapter reads it (`config.continuity`); `storeWriteWaitMs` is a Redis command's bound (`REDIS_COMMAND_TIMEOUT_MS`). */
export function continuitySettings(env: ContinuityVariables, storeWriteWaitMs: number) {
  return {
    conversationTtlSeconds: env.CONVERSATION_TTL_SECONDS,
    conversationMaxEntries: env.CONVERSATION_MAX_ENTRIES,
    /** Lower-cased, in order of preference. */
    conversationIdHeaders: listOf(env.CONVERSATION_ID_HEADERS).map((name) => name.toLowerCase()),
    responsesTtlSeconds: env.RESPONSES_TTL_SECONDS,
    responsesMaxEntries: env.RESPONSES_MAX_ENTRIES,
    /** How long an answer's end waits for its conversation turn and stored response to be written. */
    storeWriteWaitMs,
  };
}

/** What carries an answer to the next request: thread memory, stored responses, their lifetimes and bounds (`CONVERSATION_*`, `RESPONSES_*`). */
export type ContinuitySettings = ReturnType<typeof continuitySettings>;
