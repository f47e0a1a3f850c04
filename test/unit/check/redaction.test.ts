import { describe, expect, it } from "vitest";
import { citeSources } from "../../../src/answer/cite-sources.js";
import { ContentRedactor, contentShape } from "../../../src/check/recording/redact-content.js";
import { REDACTED, Secrets, shownUrl, userinfoSecrets, withoutTokens } from "../../../src/check/recording/redact-secrets.js";

describe("content placeholders of the same shape", () => {
  it("keeps length, white space, digits, punctuation, the parsers' words and document extensions; letters become x", () => {
    const redactor = new ContentRedactor("mode");
    const text = "Travel is reimbursed within 30 days [1].\n\nSources:\n[1] expenses.txt, p. 4 — Travel policy";
    const redacted = redactor.text(text);
    expect(redacted.length).toBe(text.length);
    expect(redacted).toBe("Xxxxxx xx xxxxxxxxxx xxxxxx 30 xxxx [1].\n\nSources:\n[1] xxxxxxxb.txt, p. 4 — Xxxxxx xxxxxx");
    expect(contentShape(redacted)).toBe(contentShape(text));
  });

  it("gives each document name a placeholder of its own, the same wherever it appears, so markers still cite their sources", () => {
    const redactor = new ContentRedactor("mode");
    const output = "Remote work needs approval [handbook.md]. Claims go through finance [expenses.txt] [Handbook.md].";
    const sources = [{ filename: "handbook.md", title: "Remote work", page: null, snippet: null }];
    const redacted = redactor.text(output);
    const redactedSources = sources.map((source) => ({ ...source, filename: redactor.text(source.filename), title: redactor.text(source.title) }));
    expect(redactedSources[0]?.filename).not.toBe(redactor.text("expenses.txt"));
    const live = citeSources(output, sources);
    const replayed = citeSources(redacted, redactedSources);
    expect(replayed.citations.map(({ start, end, source }) => [start, end, source])).toEqual(live.citations.map(({ start, end, source }) => [start, end, source]));
    expect(replayed.sources.map((source) => source.cited)).toEqual(live.sources.map((source) => source.cited));
    expect(redacted).not.toMatch(/handbook|expenses|Remote|finance/i);
  });

  it("redacts every string of a JSON body but the interface's structure (ids, statuses, cursors, the mode, tool names)", () => {
    const redactor = new ContentRedactor("interaction_mode");
    const body = {
      id: "q-1",
      status: "PROCESSED",
      interaction_mode: "reason",
      content: "What is the policy?",
      steps: [{ text: "Searching the policy." }, { tool: "search_documents" }, { tool: { name: "outline", arguments: "secret plan" } }],
      next_cursor: "abc123",
      detail: [{ loc: ["body", "interaction_mode"], msg: "Field required", type: "missing", input: { content: "hidden" } }],
      page: 4,
    };
    expect(redactor.json(body)).toEqual({
      id: "q-1",
      status: "PROCESSED",
      interaction_mode: "reason",
      content: "Xxxx xx xxx xxxxxx?",
      steps: [{ text: "Xxxxxxxxx xxx xxxxxx." }, { tool: "search_documents" }, { tool: { name: "outline", arguments: "xxxxxx xxxx" } }],
      next_cursor: "abc123",
      detail: [{ loc: ["body", "interaction_mode"], msg: "Field required", type: "missing", input: { content: "xxxxxx" } }],
      page: 4,
    });
  });
});

describe("credentials out of what is printed and recorded", () => {
  it("shows a URL without userinfo and query string, and knows the userinfo as secrets", () => {
    expect(shownUrl("https://user:p%40ss@workspace.example.com/api?token=abc")).toBe("https://workspace.example.com/api");
    expect(userinfoSecrets("https://user:p%40ss@workspace.example.com/api")).toEqual(["user", "p@ss"]);
    expect(shownUrl("not a url")).toBe("(not a URL)");
  });

  it("replaces tokens by labels, learns them, and scrubs their copies anywhere", () => {
    const secrets = new Secrets(["sk-live-key-123"]);
    const body = {
      token: "conn-token-0001",
      subscription_token: "sub-token-0002",
      ws_url: "wss://rt.example.com/connection/websocket?auth=query-secret-3",
      output: "echo of conn-token-0001 and sk-live-key-123",
    };
    const cleaned = secrets.scrubJson(withoutTokens(body, secrets));
    expect(cleaned).toEqual({
      token: "<token>",
      subscription_token: "<subscription-token>",
      ws_url: "wss://rt.example.com/connection/websocket",
      output: `echo of ${REDACTED} and ${REDACTED}`,
    });
    expect(secrets.scrub("later: sub-token-0002, query-secret-3")).toBe(`later: ${REDACTED}, ${REDACTED}`);
    // Too short to search for in all text: removed where it stands only.
    expect(new Secrets(["abc"]).scrub("abc")).toBe("abc");
  });
});
