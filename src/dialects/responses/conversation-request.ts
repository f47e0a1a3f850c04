import { z } from "zod";
import { inputItemSchema, metadataSchema } from "./response-request.js";

/** At most this many items in one create request, as OpenAI's API allows. */
export const MAX_ITEMS_PER_REQUEST = 20;

/** The body of `POST /v1/conversations` (docs/responses-api.md#conversations): initial items and metadata. */
export const conversationCreateSchema = z.looseObject({
  items: z.array(inputItemSchema).max(MAX_ITEMS_PER_REQUEST).nullish(),
  metadata: metadataSchema.nullish(),
});

/** The body of `POST /v1/conversations/{id}`: the metadata that replaces the conversation's. */
export const conversationUpdateSchema = z.looseObject({ metadata: metadataSchema });

/** The body of `POST /v1/conversations/{id}/items`: items to add at the end. */
export const conversationItemsSchema = z.looseObject({ items: z.array(inputItemSchema).min(1).max(MAX_ITEMS_PER_REQUEST) });
