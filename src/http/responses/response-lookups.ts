import type { BackgroundResponses } from "../../continuity/background/background-responses.js";
import type { BackgroundRecord } from "../../continuity/background/background-store.js";
import type { ConversationRecord } from "../../continuity/conversations-api/conversations-api-store.js";
import type { ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import type { StoredResponses } from "../../continuity/responses/stored-responses.js";
import type { StoredInputItem } from "../../dialects/responses/read-input.js";
import { CONVERSATION_ID, RESPONSE_ID } from "../../dialects/responses/response-request.js";
import type { StoredValue } from "../../dialects/responses/stored-value.js";
import { NotFoundError } from "../../errors/adapter-error.js";
import type { StoredResponse } from "./response-turns.js";

/** Who looks a record up: the caller's principal, in the workspace the request names (any of the caller's when none). */
export interface Looker {
  principal: string;
  workspace: string | undefined;
}

/**
 * A stored response this caller may see (continuity's `visible`); otherwise, or for an id that is no
 * response's, a 404 naming `param` (docs/responses-api.md): the one meaning of "not visible".
 */
export function visibleResponse(
  stored: ResponseLookup, id: string, looker: Looker, param: string,
): Promise<StoredResponse> {
  // OpenAI's and the Open Responses spec's code for a chain that cannot continue (docs/responses-api.md#websocket-mode).
  const code = param === "previous_response_id" ? "previous_response_not_found" : "response_not_found";
  return foundOr404(RESPONSE_ID.test(id) && stored.visible(id, looker.principal, looker.workspace), () => {
    return new NotFoundError(`No response with id '${id}' was found`, { param, code });
  });
}

/** What a continuation reads of the stored responses: the adapter's stores, or a WebSocket's own responses before them. */
export type ResponseLookup = Pick<StoredResponses<StoredValue>, "visible" | "producing">;

/** A conversation this caller may see; otherwise, or for an id that is no conversation's, a 404 naming `param`. */
export function visibleConversation(
  conversations: ConversationsApi, id: string, looker: Looker, param: string,
): Promise<ConversationRecord> {
  return foundOr404(CONVERSATION_ID.test(id) && conversations.visible(id, looker.principal, looker.workspace), () => {
    return new NotFoundError(`No conversation with id '${id}' was found`, { param, code: "conversation_not_found" });
  });
}

/** What a lookup found, or its 404 (no lookup at all for an id of the wrong kind: `false`). */
async function foundOr404<T>(lookup: Promise<T | null> | false, notFound: () => NotFoundError): Promise<T> {
  const found = lookup === false ? null : await lookup;
  if (found === null) throw notFound();
  return found;
}

/** The background response of that id this caller may see, or null (none, or an id that is no response's): the stored responses are looked at next. */
export async function visibleBackground(
  background: BackgroundResponses,
  id: string,
  looker: Looker,
): Promise<BackgroundRecord | null> {
  return RESPONSE_ID.test(id) ? background.visible(id, looker.principal, looker.workspace) : null;
}

/**
 * `item_reference`s resolved to the stored items they name (an unknown or foreign one is a 404:
 * silently dropping part of the conversation would alter it), and the last response referenced.
 */
export async function resolveReferences(
  stored: ResponseLookup,
  items: StoredInputItem[],
  looker: Looker,
): Promise<{ resolved: StoredInputItem[]; lastReferenced: StoredResponse | null }> {
  let lastReferenced: StoredResponse | null = null;
  const resolved: StoredInputItem[] = [];
  for (const [index, item] of items.entries()) {
    if (item.type !== "item_reference") {
      resolved.push(item);
      continue;
    }
    const producing = await stored.producing(item.id, looker.principal, looker.workspace);
    const output = producing?.value.response.output.find((candidate) => candidate.id === item.id);
    if (!producing || !output) {
      throw new NotFoundError(`No stored item with id '${item.id}' was found (input.${index})`, { param: "input", code: "item_not_found" });
    }
    lastReferenced = producing;
    resolved.push(output);
  }
  return { resolved, lastReferenced };
}
