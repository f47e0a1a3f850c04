import { z } from "zod";
import type { AdapterError } from "./adapter-error.js";

/** The body of every error response: the interface's `detail` and OpenAI's `error`. */
export const errorBodySchema = z.object({
  detail: z.union([
    z.string(),
    z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.int()])),
        msg: z.string(),
        type: z.string(),
        input: z.unknown().optional(),
        ctx: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
  ]),
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});
/** An error response body. */
export type ErrorBody = z.infer<typeof errorBodySchema>;

/**
 * The body of an error: the interface's `detail` (docs/architecture/upstream.md#errors) beside an OpenAI-style `error`
 * object, which OpenAI SDKs read (without it they print "status code (no body)").
 */
export function errorBody(error: AdapterError): ErrorBody {
  return {
    detail: error.detail,
    error: { message: error.message, type: error.type, param: error.param, code: error.code },
  };
}
