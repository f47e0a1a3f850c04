import { describe, expect, it } from "vitest";
import { carriesUserInfo, redactUrl, redactUrlsIn } from "../../../src/util/redact-url.js";

// docs/operating.md#credentials-in-urls: a URL is printed without the credentials it carries.

describe("redactUrl", () => {
  it("replaces user info and the values of secret-looking query parameters, and leaves the rest as written", () => {
    expect(redactUrl("http://user:sk-secret@127.0.0.1:18097")).toBe("http://REDACTED:REDACTED@127.0.0.1:18097/");
    expect(redactUrl("https://token-only@workspace.example.com/api")).toBe("https://REDACTED@workspace.example.com/api");
    expect(redactUrl("https://h.example/v1?api_key=abc&region=eu&X-Amz-Signature=s1&sig=s2&access_token=t"))
      .toBe("https://h.example/v1?api_key=REDACTED&region=eu&X-Amz-Signature=REDACTED&sig=REDACTED&access_token=REDACTED");
    expect(redactUrl("http://127.0.0.1:18097")).toBe("http://127.0.0.1:18097");
    expect(redactUrl("not a url")).toBe("not a url");
    expect(redactUrl("//user:pw@host")).toBe("(a URL with credentials)");
  });

  it("redacts every URL inside a text, and tells a URL with user info", () => {
    expect(redactUrlsIn("tracing on: OTLP http/protobuf to https://u:p@collector:4318/v1/traces, sampler always_on"))
      .toBe("tracing on: OTLP http/protobuf to https://REDACTED:REDACTED@collector:4318/v1/traces, sampler always_on");
    expect(carriesUserInfo("http://u:p@h")).toBe(true);
    expect(carriesUserInfo("http://h")).toBe(false);
  });
});
