import type { Logger } from "pino";
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

/** What a new conversation starts with: its first items (each with its id) and its metadata. */
export interface NewConversation {
  items: readonly ConversationItem[];
  metadata: Record<string, string>;
}

/**
 * The Conversations API's conversations (docs/responses-api.md#conversations), whatever the HTTP
 * route: who may see one (`owned`), its items in order, and the one workspace query thread its
 * responses continue, chosen when it is made. Items come shaped by the dialect (each with its id);
 * what a caller may not see, or what went meanwhile, is null or false here (the route answers it
 * as its 404); a store that does not answer a lookup is a 503 ("unknown" is never "not found").
 */
export class ConversationsApi {
  constructor(private readonly options: ConversationsApiOptions) {}

  /** A conversation the caller may see (`owned`), or null; a 503 when the store does not answer. */
  async visible(id: string, principal: string, workspace: string | undefined): Promise<ConversationRecord | null> {
    const lookup = { what: `The conversation '${id}'`, code: "conversation_store_unavailable", store: "conversation object" };
    const record = await lookupOrUnavailable(() => this.options.store.get(id), lookup, this.options);
    return record && owned(record, principal, workspace) ? record : null;
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
    await this.options.store.create(record, [...body.items], this.options.ttlSeconds);
    return record;
  }

  /** Replaces a conversation's metadata: the record as it now is, or null when it went meanwhile. */
  async update(record: ConversationRecord, metadata: Record<string, string>): Promise<ConversationRecord | null> {
    const updated = { ...record, metadata };
    return (await this.options.store.update(updated, this.options.ttlSeconds)) ? updated : null;
  }

  delete(id: string): Promise<boolean> {
    return this.options.store.delete(id);
  }

  /** Every item of a conversation, oldest first. */
  items(id: string): Promise<ConversationItem[]> {
    return this.options.store.items(id);
  }

  /** One item of a conversation, or null when it has none of that id. */
  async item(id: string, itemId: string): Promise<ConversationItem | null> {
    return (await this.options.store.items(id)).find((entry) => entry.id === itemId) ?? null;
  }

  /** Adds items at the end of a conversation (its lifetime starts over); false when it went meanwhile. */
  append(id: string, items: readonly ConversationItem[]): Promise<boolean> {
    return this.options.store.append(id, [...items], this.options.ttlSeconds);
  }

  deleteItem(id: string, itemId: string): Promise<boolean> {
    return this.options.store.deleteItem(id, itemId);
  }
}
