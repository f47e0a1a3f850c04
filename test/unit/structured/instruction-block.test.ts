import { describe, expect, it } from "vitest";
import { readInstructions, repairInstructions, withInstructions } from "../../../src/structured/instruction-block.js";
import type { StructuredRequest } from "../../../src/structured/structured-request.js";

const schemaRequest: StructuredRequest = {
  kind: "json_schema",
  name: "contracts",
  description: "Every contract",
  schema: { type: "object", properties: { items: { type: "array", items: { type: "string" } } }, required: ["items"] },
  param: "response_format",
};

describe("the instruction block", () => {
  it("follows the question, asks for only JSON matching the schema, with markers inside strings", () => {
    const content = withInstructions("List every contract.", schemaRequest);
    expect(content.startsWith("List every contract.\n\n<<<structured-answer\n")).toBe(true);
    expect(content).toContain("Reply with only one JSON value that matches the JSON Schema below. No text before or after it, no code fence.");
    expect(content).toContain("inside string values only");
    expect(content).toContain('Schema "contracts":\n{"type":"object"');
    expect(content.endsWith("structured-answer>>>")).toBe(true);
  });

  it("asks for a JSON object, and no schema, for json_object", () => {
    const content = withInstructions("Q?", { kind: "json_object", name: null, description: null, schema: null, param: "response_format" });
    expect(content).toContain("Reply with only one JSON object.");
    expect(content).not.toContain("Schema");
    expect(readInstructions(content)).toEqual({ question: "Q?", schema: null, repair: false });
  });

  it("names the function whose arguments are asked for", () => {
    const content = withInstructions("Q?", { ...schemaRequest, kind: "function", name: "record_contracts", param: "tool_choice" });
    expect(content).toContain('The JSON is the arguments of the function "record_contracts".');
  });

  it("is read back by a workspace: the question, the schema, and whether it is the repair turn", () => {
    expect(readInstructions(withInstructions("List every contract.", schemaRequest))).toEqual({ question: "List every contract.", schema: schemaRequest.schema, repair: false });
    const repair = repairInstructions("/items/0: Instance type \"number\" is invalid.", schemaRequest);
    expect(repair).toContain("the corrected JSON");
    expect(readInstructions(repair)).toMatchObject({ schema: schemaRequest.schema, repair: true });
    expect(readInstructions(repair)?.question).toContain("/items/0");
  });

  it("is not found in an ordinary question, or one that only quotes the opening line", () => {
    expect(readInstructions("What is the leave policy?")).toBeNull();
    expect(readInstructions("Explain <<<structured-answer\nplease")).toBeNull();
  });
});
