import { describe, expect, it } from "vitest";
import { composeJsonAnswer, type JsonStyle, MAX_JSON_ITEMS, MAX_JSON_VALUES } from "../../../src/embedded-workspace/compose-json.js";
import { DocumentIndex, type Passage } from "../../../src/embedded-workspace/document-index.js";
import { extractJson } from "../../../src/structured/extract-json.js";
import { repairInstructions, withInstructions } from "../../../src/structured/instruction-block.js";
import { SchemaValidation } from "../../../src/structured/schema-validator.js";
import type { StructuredRequest } from "../../../src/structured/structured-request.js";

const passages: Passage[] = [
  { filename: "leave.md", heading: "Annual leave", text: "Employees get 25 days of annual leave. Leave is requested in the portal.", page: null, title: "Leave" },
  { filename: "travel.md", heading: "Travel", text: "Travel is booked through the travel desk. Leave days are not used for travel.", page: null, title: "Travel" },
];
const index = new DocumentIndex(passages);
const now = Date.UTC(2026, 10, 25, 12);
const schema = {
  type: "object",
  properties: {
    policies: {
      type: "array",
      items: {
        type: "object",
        properties: { name: { type: "string" }, summary: { type: "string" }, kind: { type: "string", enum: ["leave", "travel"] }, reviewed: { type: "string", format: "date" } },
        required: ["name", "summary", "kind", "reviewed"],
        additionalProperties: false,
      },
    },
    count: { type: "integer", minimum: 0 },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
  },
  required: ["policies", "count", "note"],
  additionalProperties: false,
};
const request: StructuredRequest = { kind: "json_schema", name: "policies", description: null, schema, param: "response_format" };
const validation = new SchemaValidation({ maxBytes: 65_536, maxDepth: 24 });
const ask = withInstructions("How do leave and travel work?", request);
const answer = (style: JsonStyle, content = ask, previousContent?: string) => composeJsonAnswer({ content, mode: "ask", previousContent }, index, style, now);

describe("the embedded workspace's JSON mode", () => {
  it("fills the schema from its best passages: sentences with markers, an item per passage, the first enum value, counts, the day", () => {
    const script = answer("trailing-sources");
    const extracted = extractJson(script?.output ?? "");
    expect(extracted.found).toBe(true);
    const value = extracted.found ? (extracted.value as { policies: { name: string; summary: string; kind: string; reviewed: string }[]; count: number }) : null;
    expect(validation.validate(schema, value)).toEqual({ valid: true });
    expect(value?.policies.map((policy) => policy.kind)).toEqual(["leave", "leave"]);
    expect(value?.policies[0]?.summary).toMatch(/ \[1\]$/);
    expect(value?.policies[1]?.summary).toMatch(/ \[2\]$/);
    expect(value?.policies[0]?.reviewed).toBe("2026-11-25");
    expect(value?.count).toBe(2);
    expect(extracted.found && extracted.rest).toMatch(/^\n\nSources:\n\[1\] (leave|travel)\.md/);
  });

  it("answers in a code fence, bare, or in prose first, as the switch says", () => {
    expect(answer("fenced")?.output).toMatch(/^```json\n\{[\s\S]*\n```\n\nSources:/);
    const bare = answer("bare");
    expect(bare?.output.trim().endsWith("}")).toBe(true);
    expect(bare?.sources.map((source) => source.filename).sort()).toEqual(["leave.md", "travel.md"]);
    expect(extractJson(answer("prose")?.output ?? "").found).toBe(false);
    expect(extractJson(answer("prose", repairInstructions("/: not JSON", request), ask)?.output ?? "").found).toBe(true);
  });

  it("answers JSON that does not match once, or always", () => {
    const verdict = (content: string, style: JsonStyle, previous?: string) => {
      const extracted = extractJson(answer(style, content, previous)?.output ?? "");
      return extracted.found ? validation.validate(schema, extracted.value).valid : false;
    };
    const repair = repairInstructions('/: Instance type "array" is invalid.', request);
    expect([verdict(ask, "invalid-once"), verdict(repair, "invalid-once", ask)]).toEqual([false, true]);
    expect([verdict(ask, "invalid-always"), verdict(repair, "invalid-always", ask)]).toEqual([false, false]);
  });

  it("leaves a question without the block to the prose answer", () => {
    expect(answer("trailing-sources", "How do leave and travel work?")).toBeNull();
  });

  it("builds no more than its clamp, whatever minItems ask (nested, they multiply)", () => {
    const values = (value: unknown): number => (typeof value === "object" && value !== null ? 1 + Object.values(value).reduce<number>((sum, item) => sum + values(item), 0) : 1);
    const wide = { type: "array", minItems: 1000, items: { type: "string" } };
    const nested = { type: "array", minItems: 200, items: { type: "array", minItems: 200, items: { type: "array", minItems: 200, items: { type: "integer" } } } };
    for (const [asked, limit] of [[wide, MAX_JSON_ITEMS + 1], [nested, MAX_JSON_VALUES + 1]] as const) {
      const content = withInstructions("How do leave and travel work?", { ...request, schema: { type: "object", properties: { all: asked }, required: ["all"] } });
      const extracted = extractJson(answer("bare", content)?.output ?? "");
      expect(extracted.found).toBe(true);
      const all = extracted.found ? (extracted.value as { all: unknown[] }).all : [];
      expect(all.length).toBeLessThanOrEqual(MAX_JSON_ITEMS);
      expect(values(all)).toBeLessThanOrEqual(limit);
    }
  });

  it("keeps answering valid JSON for a schema within the clamp", () => {
    const few = { type: "object", properties: { all: { type: "array", minItems: 40, maxItems: 45, items: { type: "string" } } }, required: ["all"] };
    const content = withInstructions("How do leave and travel work?", { ...request, schema: few });
    const extracted = extractJson(answer("bare", content)?.output ?? "");
    expect(extracted.found && validation.validate(few, extracted.value)).toEqual({ valid: true });
  });
});
