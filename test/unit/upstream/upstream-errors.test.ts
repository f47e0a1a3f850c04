import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  GatewayTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  UpstreamError,
} from "../../../src/errors/adapter-error.js";
import { statusError } from "../../../src/upstream/upstream-errors.js";

describe("statusError", () => {
  const json = (body: unknown) => JSON.stringify(body);

  it("passes 401, 403 and 404 on with the upstream's detail", () => {
    expect(statusError(401, json({ detail: "Invalid API key" }), {}, "POST /queries")).toEqual(expect.any(AuthenticationError));
    expect(statusError(401, json({ detail: "Invalid API key" }), {}, "POST /queries").message).toBe("Invalid API key");
    expect(statusError(403, json({ detail: "No access" }), {}, "GET /queries")).toEqual(expect.any(PermissionDeniedError));
    expect(statusError(404, json({ detail: "Query not found" }), {}, "POST /queries")).toMatchObject({ status: 404, message: "Query not found" });
    expect(statusError(404, "", {}, "POST /queries")).toEqual(expect.any(NotFoundError));
  });

  it("keeps a 422's issue list, and wraps a plain 422 message in one issue", () => {
    const listed = statusError(422, json({ detail: [{ loc: ["body", "content"], msg: "Field required", type: "missing" }] }), {}, "POST /queries");
    expect(listed).toEqual(expect.any(RequestValidationError));
    expect((listed as RequestValidationError).issues).toEqual([{ loc: ["body", "content"], msg: "Field required", type: "missing" }]);
    const plain = statusError(422, json({ detail: "Bad mode" }), {}, "POST /queries") as RequestValidationError;
    expect(plain.issues).toEqual([{ loc: ["body"], msg: "Bad mode", type: "value_error" }]);
  });

  it("passes 429 on with its Retry-After, as retryable", () => {
    const error = statusError(429, json({ detail: "Slow down" }), { "retry-after": "7" }, "GET /queries");
    expect(error).toEqual(expect.any(RateLimitError));
    expect(error).toMatchObject({ headers: { "retry-after": "7" }, retryable: true });
  });

  it("turns 408 and 504 into 504, and every other status (or a body that is not JSON) into a 502 naming the call", () => {
    expect(statusError(504, "", {}, "GET /queries")).toEqual(expect.any(GatewayTimeoutError));
    expect(statusError(408, "", {}, "GET /queries").status).toBe(504);
    const broken = statusError(500, "<html>oops</html>", {}, "POST /queries");
    expect(broken).toEqual(expect.any(UpstreamError));
    expect(broken.message).toBe("The workspace service answered 500 to POST /queries");
    expect(statusError(418, json({ detail: "teapot" }), {}, "GET /queries")).toMatchObject({ status: 502, retryable: false });
  });
});
