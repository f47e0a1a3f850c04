import { z } from "zod";

// Schemas for what the Workspace Knowledge Service sends (docs/architecture/upstream.md#queries, docs/architecture/upstream.md#listing-and-pagination). They keep only
// what the adapter reads and accept anything else (looseObject, nullish), so that an upstream that
// adds fields or omits optional ones does not break us. Steps and sources stay `unknown` here and
// are read by tolerant translators.

/** The realtime subscription position of a query (docs/architecture/upstream.md#queries `since`). */
export const streamPositionSchema = z.looseObject({ offset: z.int().nonnegative(), epoch: z.string() });

/** A query, as `POST /queries` returns it and as `GET /queries` lists it (docs/architecture/upstream.md#queries). */
export const upstreamQuerySchema = z.looseObject({
  id: z.string().min(1),
  content: z.string().nullish(),
  status: z.string().nullish(),
  output: z.string().nullish(),
  steps: z.array(z.unknown()).nullish(),
  run_id: z.string().nullish(),
  // The realtime fields only make the answer faster: a malformed one means polling, never a 502.
  channel: z.string().nullish().catch(null),
  token: z.string().nullish().catch(null),
  subscription_token: z.string().nullish().catch(null),
  ws_url: z.string().nullish().catch(null),
  since: streamPositionSchema.nullish().catch(null),
  usage: z
    .looseObject({
      prompt_tokens: z.int().nonnegative().nullish(),
      completion_tokens: z.int().nonnegative().nullish(),
    })
    .nullish()
    .catch(null),
});
/** A query as the upstream sent it. */
export type UpstreamQuery = z.infer<typeof upstreamQuerySchema>;

/** A page of any list endpoint (docs/architecture/upstream.md#listing-and-pagination); items are validated one by one by the caller. */
export const upstreamPageSchema = z.looseObject({
  data: z.array(z.unknown()),
  next_cursor: z.string().nullish(),
  has_more: z.boolean().nullish(),
});
/** One page of a list. */
export type UpstreamPage = z.infer<typeof upstreamPageSchema>;

/** An error body of the upstream (docs/architecture/upstream.md#errors): `detail` is a message or a 422 list. */
export const upstreamErrorSchema = z.looseObject({
  detail: z.union([
    z.string(),
    z.array(
      z.looseObject({
        loc: z.array(z.union([z.string(), z.number()])),
        msg: z.string(),
        type: z.string(),
      }),
    ),
  ]),
});
