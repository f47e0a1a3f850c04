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

describe("the tools as a host that shows the answer card lists them", () => {
  const plain = listedTools();
  const card = listedTools({ card: true });

  it("links the card from ask, reason and build, and declares each source's fetch id in their output schema; search and fetch stay as they are", () => {
    for (const [index, tool] of card.entries()) {
      const before = plain[index] as (typeof plain)[number];
      if (["ask", "reason", "build"].includes(tool.name)) {
        const { _meta, outputSchema, ...rest } = tool;
        const { outputSchema: plainOutput, ...plainRest } = before;
        expect(rest).toEqual(plainRest);
        expect(_meta).toEqual({ ui: { resourceUri: "ui://workspace/answer-v1.html", visibility: ["model", "app"] }, "ui/resourceUri": "ui://workspace/answer-v1.html" });
        const source = (outputSchema.properties as any).sources.items;
        expect(source.required).toContain("id");
        expect(source.properties).toEqual({ ...(plainOutput.properties as any).sources.items.properties, id: expect.objectContaining({ type: "string" }) });
      } else {
        expect(tool).toEqual(before);
      }
    }
    expect(plain.every((tool) => tool._meta === undefined)).toBe(true);
  });
});
