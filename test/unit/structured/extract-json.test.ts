import { describe, expect, it } from "vitest";
import { extractJson } from "../../../src/structured/extract-json.js";

describe("extractJson", () => {
  it("takes a bare object, as written", () => {
    const output = '{"a": [1, "}]"], "b": "say \\"hi\\""}';
    expect(extractJson(output)).toEqual({ found: true, value: { a: [1, "}]"], b: 'say "hi"' }, text: output, rest: "" });
  });

  it("keeps what follows the value apart: the Sources list the workspace appends", () => {
    const result = extractJson('\n {"title": "Leave [1]"}\n\nSources:\n[1] handbook.md');
    expect(result).toMatchObject({ found: true, value: { title: "Leave [1]" }, text: '{"title": "Leave [1]"}', rest: "\n\nSources:\n[1] handbook.md" });
  });

  it("takes the value out of a json code fence, with text after the fence", () => {
    const result = extractJson('```json\n[{"a": 1}]\n```\n\nSources:\n[1] a.md');
    expect(result).toMatchObject({ found: true, value: [{ a: 1 }], text: '[{"a": 1}]', rest: "\n\nSources:\n[1] a.md" });
    expect(extractJson('```\n{"a": 1}\n```')).toMatchObject({ found: true, value: { a: 1 } });
  });

  it.each([
    ["prose before the value", 'Here is the JSON: {"a": 1}', "does not start"],
    ["an empty answer", "   ", "empty"],
    ["a value cut short", '{"a": [1, 2', "not closed"],
    ["JSON that does not parse", "{'a': 1}", "does not parse"],
    ["a fence left open after the value", '```json\n{"a": 1}\nSources: x', "fence"],
    ["a scalar", '"just a string"', "does not start"],
  ])("finds nothing in %s", (_name, output, reason) => {
    const result = extractJson(output);
    expect(result.found).toBe(false);
    expect(result.found ? "" : result.reason).toContain(reason);
  });
});
