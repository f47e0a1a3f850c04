import { describe, expect, it } from "vitest";
import { judgeAnswer } from "../../../src/answer/judge-answer.js";
import { inProcessSchemas } from "../../../src/structured/schema-service.js";
import type { StructuredRequest } from "../../../src/structured/structured-request.js";

const validation = inProcessSchemas({ maxBytes: 65_536, maxDepth: 24 });
const schema = { type: "object", properties: { summary: { type: "string", minLength: 5 }, days: { type: "array", items: { type: "integer" } } }, required: ["summary", "days"] };
const request: StructuredRequest = { kind: "json_schema", name: "leave", description: null, schema, param: "response_format" };
const source = (filename: string) => ({ filename, title: null, page: null, snippet: null });
const judge = (output: string, strip = false) => judgeAnswer(output, [], request, validation, strip);

describe("judgeAnswer", () => {
  const output = '```json\n{"summary": "Leave is 25 days [1].", "days": [1, 2]}\n```\n\nSources:\n[1] leave.md — Annual leave\n[2] travel.md';

  it("delivers the JSON text, its markers' citations moved onto it, and the sources cited by them alone", async () => {
    const judged = await judge(output);
    expect(judged.valid).toBe(true);
    if (!judged.valid) return;
    expect(judged.json).toBe('{"summary": "Leave is 25 days [1].", "days": [1, 2]}');
    expect(judged.citations.map((citation) => judged.json.slice(citation.start, citation.end))).toEqual(["[1]"]);
    expect(judged.sources.map((source) => [source.filename, source.cited])).toEqual([["leave.md", true], ["travel.md", false]]);
  });

  it("strips the markers on request, keeping the sources", async () => {
    const judged = await judge(output, true);
    expect(judged).toMatchObject({ valid: true, json: '{"summary": "Leave is 25 days.", "days": [1, 2]}', value: { summary: "Leave is 25 days." }, citations: [] });
  });

  it("numbers markers into the structured sources when no list follows the JSON", async () => {
    const judged = await judgeAnswer('{"summary": "Leave is 25 days [2].", "days": []}', [source("a.md"), source("b.md")], request, validation, false);
    expect(judged.valid && judged.sources.map((source) => [source.filename, source.cited])).toEqual([["a.md", false], ["b.md", true]]);
  });

  it("keeps the markers when the JSON without them no longer matches", async () => {
    const judged = await judge('{"summary": "Two [1]", "days": []}\n\nSources:\n[1] leave.md', true);
    expect(judged).toMatchObject({ valid: true, json: '{"summary": "Two [1]", "days": []}' });
  });

  it("says what is wrong for the repair turn: no JSON, or the validator's first error with its pointer", async () => {
    expect(await judge("Leave is 25 days [1].")).toEqual({ valid: false, problem: "/: the answer does not start with a JSON object or array", repairable: true });
    expect(await judge('{"summary": "Leave is 25 days", "days": ["x"]}')).toEqual({ valid: false, problem: '/days/0: Instance type "string" is invalid. Expected "integer".', repairable: true });
  });
});
