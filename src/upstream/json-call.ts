import type { z } from "zod";
import { UpstreamError } from "../errors/adapter-error.js";
import { endpointOf, type Exchange, type Transport } from "./transport.js";
import { statusError, transportError } from "./upstream-errors.js";

/** Who a JSON call is made for: the credential to present, and the workspace to select (none for `GET /workspaces`). */
export interface CallerHeaders {
  credential: string;
  workspace: string | null;
}

/** One JSON call to the upstream, with everything named. */
export interface JsonCall<T extends z.ZodType> {
  method: "GET" | "POST";
  path: string;
  search?: URLSearchParams;
  caller: CallerHeaders | null;
  /** Reads the 2xx body; anything else is a 502 naming the call. */
  schema: T;
  /** Sent as JSON when given. */
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/**
 * One JSON call: credential and workspace headers, the exchange, a non-2xx status or a failed
 * exchange mapped to the error hierarchy (upstream-errors.ts), the body parsed by its schema.
 */
export async function callJson<T extends z.ZodType>(transport: Transport, request: JsonCall<T>): Promise<z.infer<T>> {
  const { method, path, search, caller, schema, body, signal } = request;
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": "workspace-openai-adapter",
  };
  if (caller) {
    headers.authorization = `Bearer ${caller.credential}`;
    if (caller.workspace !== null) headers["service-workspace"] = caller.workspace;
  }
  if (body !== undefined) headers["content-type"] = "application/json";
  const what = endpointOf({ method, path });
  let response: Exchange;
  try {
    const sent = body === undefined ? null : JSON.stringify(body);
    response = await transport.send({ method, path, search, headers, body: sent }, signal);
  } catch (error) {
    throw transportError(error, what, signal);
  }
  const text = response.text;
  if (response.statusCode < 200 || response.statusCode >= 300) {
    throw statusError(response.statusCode, text, response.headers, what);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamError(`The workspace service sent a body that is not JSON for ${what}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamError(
      `The workspace service sent an unexpected body for ${what}: ${parsed.error.issues[0]?.path.join(".") ?? ""} ${parsed.error.issues[0]?.message ?? ""}`.trim(),
    );
  }
  return parsed.data;
}
