import { z } from "zod";

/** OpenAI's model object, for `GET /v1/models`. */
export const modelSchema = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.int(),
  owned_by: z.string(),
});
/** One listed model. */
export type Model = z.infer<typeof modelSchema>;
