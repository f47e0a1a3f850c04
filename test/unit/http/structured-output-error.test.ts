import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { StructuredOutputError } from "../../../src/errors/adapter-error.js";
import { errorBodySchema } from "../../../src/errors/error-body.js";
import { sendError } from "../../../src/http/error-response.js";

/** A response that records what is written to it. */
function recordingResponse() {
  const headers = new Map<string, unknown>();
  let body = "";
  const response = {
    statusCode: 200,
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), value),
    hasHeader: (name: string) => headers.has(name.toLowerCase()),
    end: (text: string) => {
      body = text;
    },
  };
  return { response: response as unknown as ServerResponse, headers, body: () => JSON.parse(body) as unknown };
}

describe("StructuredOutputError", () => {
  it("is a 400 the SDKs do not retry, naming the parameter that asked, in both error shapes", () => {
    const { response, headers, body } = recordingResponse();
    const message = "The workspace's answer did not match the schema 'contracts' after 2 attempts: /items/0/date: String does not match format \"date\".";
    sendError(response, new StructuredOutputError(message, "text.format"));
    expect(response.statusCode).toBe(400);
    expect(headers.get("x-should-retry")).toBe("false");
    const parsed = errorBodySchema.parse(body());
    expect(parsed.error).toEqual({ message, type: "invalid_request_error", param: "text.format", code: "structured_output_failed" });
    expect(parsed.detail).toBe(message);
  });
});
