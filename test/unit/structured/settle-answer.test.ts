import { describe, expect, it } from "vitest";
import { StructuredOutputError } from "../../../src/errors/adapter-error.js";
import { SchemaValidation } from "../../../src/structured/schema-validator.js";
import { settleAnswer, type TurnOutput } from "../../../src/structured/settle-answer.js";
import type { StructuredRequest } from "../../../src/structured/structured-request.js";

const options = { validation: new SchemaValidation({ maxBytes: 65_536, maxDepth: 24 }), strip: false };
const request: StructuredRequest = {
  kind: "json_schema",
  name: "leave",
  description: null,
  schema: { type: "object", properties: { days: { type: "integer" } }, required: ["days"] },
  param: "text.format",
};
const turn = (output: string): TurnOutput => ({ output, sources: [] });

/** A repair turn that records the content it was asked with. */
function repairing(output: string) {
  const asked: string[] = [];
  return { asked, repair: async (content: string) => (asked.push(content), turn(output)) };
}

describe("settleAnswer", () => {
  it("takes a matching first answer without a repair", async () => {
    const { asked, repair } = repairing("{}");
    expect(await settleAnswer(turn('{"days": 25}'), repair, request, options)).toMatchObject({ json: '{"days": 25}', turns: 1 });
    expect(asked).toEqual([]);
  });

  it("asks once more with the first error when the answer is prose, and takes the repair", async () => {
    const { asked, repair } = repairing('{"days": 25}\n\nSources:\n[1] leave.md');
    expect(await settleAnswer(turn("Employees get 25 days [1]."), repair, request, options)).toMatchObject({ value: { days: 25 }, turns: 2 });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("/: the answer does not start with a JSON object or array");
    expect(asked[0]).toContain("structured-answer>>>");
  });

  it("fails with the 422 naming the parameter and the last problem after the repair", async () => {
    const { asked, repair } = repairing('{"days": "many"}');
    const failure = await settleAnswer(turn('{"days": "some"}'), repair, request, options).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StructuredOutputError);
    expect(failure).toMatchObject({ status: 422, param: "text.format", code: "structured_output_failed" });
    expect((failure as Error).message).toBe("The workspace's answer did not match the schema 'leave' after 2 attempts: /days: Instance type \"string\" is invalid. Expected \"integer\".");
    expect(asked).toHaveLength(1);
  });

  it("does not repair what asking again cannot fix", async () => {
    const { asked, repair } = repairing('{"days": 1}');
    const refused = { ...request, schema: { type: "object", pattern: "(a)\\1" } };
    await expect(settleAnswer(turn('{"days": 1}'), repair, refused, options)).rejects.toThrow(/asking again could not help/);
    expect(asked).toEqual([]);
  });
});
