import type { IncomingMessage, ServerResponse } from "node:http";
import { PAGE_HEADERS } from "./consent-page.js";

const FORM_LIMIT_BYTES = 16 * 1024;

/** The request's cookies by name. */
export function cookiesOf(request: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const equals = part.indexOf("=");
    if (equals > 0) cookies.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  return cookies;
}

/** A urlencoded form of at most 16 KB, or undefined (another type, or too large). */
export async function readForm(request: IncomingMessage): Promise<URLSearchParams | undefined> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers["content-type"] ?? "")) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** An HTML page with the consent pages' headers (never framed, cached or referred from). */
export function send(response: ServerResponse, status: number, html: string, cookie?: string): void {
  response.statusCode = status;
  for (const [name, value] of Object.entries(PAGE_HEADERS)) response.setHeader(name, value);
  if (cookie) response.setHeader("set-cookie", cookie);
  response.end(html);
}

