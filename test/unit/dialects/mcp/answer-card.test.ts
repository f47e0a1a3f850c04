import { describe, expect, it } from "vitest";
import { ANSWER_CARD_URI, cardContents, cardListing, cardToolMeta, declaresAnswerCard } from "../../../../src/dialects/mcp/answer-card.js";

const capabilities = (value: unknown) => ({ "io.modelcontextprotocol/clientCapabilities": value });

describe("the answer card (MCP Apps)", () => {
  it("is for a 2026-07-28 client that declares the extension, with the card's MIME type when it lists any", () => {
    expect(declaresAnswerCard(capabilities({ extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } }))).toBe(true);
    expect(declaresAnswerCard(capabilities({ extensions: { "io.modelcontextprotocol/ui": {} } }))).toBe(true);
    expect(declaresAnswerCard(capabilities({ extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/uri-list"] } } }))).toBe(false);
    expect(declaresAnswerCard(capabilities({ extensions: { "io.modelcontextprotocol/tasks": {} } }))).toBe(false);
    expect(declaresAnswerCard(capabilities({ elicitation: {} }))).toBe(false);
    expect(declaresAnswerCard(capabilities({ extensions: { "io.modelcontextprotocol/ui": "yes" } }))).toBe(false);
    expect(declaresAnswerCard(capabilities("all"))).toBe(false);
    expect(declaresAnswerCard(undefined)).toBe(false);
  });

  it("is linked from a tool in the extension's shape and the older flat key, and served with a policy that allows no domain", () => {
    expect(cardToolMeta()).toEqual({ ui: { resourceUri: ANSWER_CARD_URI, visibility: ["model", "app"] }, "ui/resourceUri": ANSWER_CARD_URI });
    const policy = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true }, "openai/widgetCSP": { connect_domains: [], resource_domains: [] } };
    expect(cardListing()).toMatchObject({ uri: "ui://workspace/answer-v1.html", mimeType: "text/html;profile=mcp-app", _meta: policy });
    expect(cardContents("<!doctype html>")).toEqual({ uri: ANSWER_CARD_URI, mimeType: "text/html;profile=mcp-app", text: "<!doctype html>", _meta: policy });
  });
});
