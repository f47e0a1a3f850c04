import type { Request, Response } from "express";

/** docs/architecture/upstream.md#listing-and-pagination: `limit` 1..100 (default 20) and an opaque `cursor`; anything else is a 422. */
export function readPage(
  request: Request,
  response: Response,
): { limit: number; cursor: string | undefined } | null {
  const rawLimit = request.query.limit;
  const limit = rawLimit === undefined ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    response.status(422).json({
      detail: [
        {
          loc: ["query", "limit"],
          msg: "Input should be an integer from 1 to 100",
          type: "int_range",
          input: rawLimit,
        },
      ],
    });
    return null;
  }
  const rawCursor = request.query.cursor;
  if (rawCursor === undefined) return { limit, cursor: undefined };
  const decoded = typeof rawCursor === "string" ? decodeCursor(rawCursor) : null;
  if (decoded === null) {
    response.status(422).json({
      detail: [{ loc: ["query", "cursor"], msg: "Invalid cursor", type: "value_error", input: rawCursor }],
    });
    return null;
  }
  return { limit, cursor: String(decoded) };
}

/** The opaque cursor of a position in a list (a client never builds or edits one). */
export function encodeCursor(position: number): string {
  return Buffer.from(JSON.stringify({ p: position, v: 1 })).toString("base64url");
}

function decodeCursor(cursor: string): number | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as {
      p?: unknown;
      v?: unknown;
    };
    return value.v === 1 && Number.isInteger(value.p) && (value.p as number) >= 0
      ? (value.p as number)
      : null;
  } catch {
    return null;
  }
}
