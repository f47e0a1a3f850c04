import { z } from "zod";

// What a publication on a query's channel may carry (docs/upstream-assumptions.md#realtime): the
// interface does not show it. Each field is read on its own and a malformed one is dropped, so an
// upstream that publishes other shapes costs nothing but the polling it would have had anyway.
const publicationSchema = z.looseObject({
  /** Text appended to the output. */
  delta: z.string().optional().catch(undefined),
  /** The output so far (wins over `delta` in the same publication). */
  output: z.string().optional().catch(undefined),
  status: z.string().optional().catch(undefined),
  /** One step appended to the steps. */
  step: z.unknown().optional(),
  /** The steps so far (wins over `step`). */
  steps: z.array(z.unknown()).optional().catch(undefined),
});

/** A publication as the adapter understands it. */
export type Publication = z.infer<typeof publicationSchema>;

/** Reads a publication's data; anything but a JSON object is null (ignored). */
export function readPublication(data: unknown): Publication | null {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return null;
  const parsed = publicationSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}
