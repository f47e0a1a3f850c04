import { z } from "zod";

/**
 * A count read back from Redis (what INCRBY and HINCRBY write): decimal digits, no more than a safe
 * integer holds. Anything else does not parse: a value the adapter did not write is never trusted
 * (docs/architecture/continuity.md#the-stores).
 */
export const storedCountSchema = z.string().regex(/^\d{1,15}$/).transform(Number);
