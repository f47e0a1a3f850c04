import type { Logger } from "pino";
import { storedItem } from "../../dialects/responses/read-input.js";
import { CONVERSATION_ID, type InputItem } from "../../dialects/responses/response-request.js";
import { NotFoundError } from "../../errors/adapter-error.js";
import type { Clock } from "../../util/clock.js";
import type { Ids } from "../../util/ids.js";
import { lookupOrUnavailable, type Owner, owned } from "../access.js";
import type { ConversationItem, ConversationRecord, ConversationsApiStore } from "./conversations-api-store.js";

/** What the Conversations API is built from. */
export interface ConversationsApiOptions {
  store: ConversationsApiStore;
  /** `CONVERSATION_TTL_SECONDS`: a conversation lives this long after its last change. */
  ttlSeconds: number;
  clock: Clock;
  ids: Ids;
  logger: Logger;
  /** A request was refused because the store could not answer (metrics). */
  onRefused?: (() => void) | undefined;
}

/** What a new conversation starts with: its first items and its metadata. */
export interface NewConversation {
  items: readonly InputItem[];
  metadata: Record<string, string>;
}

/** The Conversations API's conversation object. */
export function conversationObject(record: ConversationRecord) {
  return { id: record.id, object: "conversation" as const, created_at: record.createdAt, metadata: record.metadata };
}

/**
 * The Conversations API's conversations (docs/responses-api.md#conversations), whatever the HTTP
 * route: who may see one (`owned`), its items (each with an id: `msg_…` when it came without
 * one), and the one workspace query thread its responses continue, chosen when it is made. A store
 * that does not answer a lookup is a 503 ("unknown" is never "not found").
 */
export class ConversationsApi {
  constructor(private readonly options: ConversationsApiOptions) {}

  /** A conversation the caller may see (`owned`): a 404 otherwise, as for stored responses. */
  async visible(id: string, principal: string, workspace: string | undefined, param: string): Promise<ConversationRecord> {
    const lookup = { what: `The conversation '${id}'`, code: "conversation_store_unavailable", store: "conversation object" };
    const find = () => this.options.store.get(id);
    const record = CONVERSATION_ID.test(id) ? await lookupOrUnavailable(find, lookup, this.options) : null;
    if (!record || !owned(record, principal, workspace)) {
      throw new NotFoundError(`No conversation with id '${id}' was found`, { param, code: "conversation_not_found" });
    }
    return record;
  }

  /** Makes a conversation, with its first items and metadata, and the query id its responses will continue. */
  async create(owner: Owner, body: NewConversation): Promise<ConversationRecord> {
    const { clock, ids } = this.options;
    const record: ConversationRecord = {
      id: ids.object("conv"),
      ...owner,
      createdAt: Math.floor(clock.now() / 1000),
      metadata: body.metadata,
      queryId: ids.query(),
    };
    await this.options.store.create(record, this.itemsOf(body.items), this.options.ttlSeconds);
    return record;
  }

  /** Replaces a conversation's metadata; a 404 when it went meanwhile. */
  async update(record: ConversationRecord, metadata: Record<string, string>): Promise<ConversationRecord> {
    const updated = { ...record, metadata };
    if (!(await this.options.store.update(updated, this.options.ttlSeconds))) throw gone(record.id);
    return updated;
  }

  delete(id: string): Promise<boolean> {
    return this.options.store.delete(id);
  }

  /** Every item of a conversation, oldest first. */
  items(id: string): Promise<ConversationItem[]> {
    return this.options.store.items(id);
  }

  /** One item of a conversation; a 404 when it has none of that id. */
  async item(record: ConversationRecord, itemId: string): Promise<ConversationItem> {
    const item = (await this.options.store.items(record.id)).find((entry) => entry.id === itemId);
    if (!item) throw new NotFoundError(`No item with id '${itemId}' in conversation '${record.id}'`, { param: "item_id", code: "item_not_found" });
    return item;
  }

  /** Adds items at the end of a conversation: the items as listed; a 404 when it went meanwhile. */
  async append(record: ConversationRecord, input: readonly InputItem[]): Promise<ConversationItem[]> {
    const items = this.itemsOf(input);
    if (!(await this.options.store.append(record.id, items, this.options.ttlSeconds))) throw gone(record.id);
    return items;
  }

  deleteItem(id: string, itemId: string): Promise<boolean> {
    return this.options.store.deleteItem(id, itemId);
  }

  /** Items as the API lists them: each with an id (`msg_…` when it came without one). */
  private itemsOf(items: readonly InputItem[]): ConversationItem[] {
    return items.map((item) => storedItem(item, item.id ?? this.options.ids.object("msg")));
  }
}

/** A conversation that went between its lookup and a change (deleted, expired). */
function gone(id: string): NotFoundError {
  return new NotFoundError(`No conversation with id '${id}' was found`, { param: "conversation_id" });
}
