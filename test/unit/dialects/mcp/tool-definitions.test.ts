import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { listedTools, TOOL_NAMES } from "../../../../src/dialects/mcp/tool-definitions.js";
import { answerToolInputSchema } from "../../../../src/dialects/mcp/tool-schemas.js";

describe("the tools as tools/list lists them", () => {
  const tools = listedTools();

  it("are the five read-only, closed-world tools, each with an object input and output schema", () => {
    expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    for (const tool of tools) {
      expect(tool.annotations).toEqual({ title: tool.title, readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: false });
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema.type).toBe("object");
      expect(tool.inputSchema).not.toHaveProperty("$schema");
      expect(tool.description.length).toBeGreaterThan(80);
    }
  });

  it("compile in a draft-07 validator (what older clients use) and agree with the zod schema that checks the arguments", () => {
    const ajv = new Ajv();
    const validate = ajv.compile(tools[0]?.inputSchema as object);
    const samples = [{ question: "hi" }, { question: "hi", query_id: "q-1" }, { question: "hi", query_id: null }, {}, { question: 1 }, { question: "hi", other: 1 }, { question: "hi", query_id: "../x" }];
    for (const sample of samples) expect(validate(sample)).toBe(answerToolInputSchema.safeParse(sample).success);
    for (const tool of tools) expect(() => ajv.compile(tool.outputSchema)).not.toThrow();
  });
});
