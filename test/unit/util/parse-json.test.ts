import { z } from "zod";
import { describe, expect, it } from "vitest";
import { parseJsonText } from "../../../src/util/parse-json.js";

describe("parseJsonText", () => {
  const schema = z.object({ from: z.string() });

  it("gives the value that fits, and undefined for text that is not JSON or does not fit, never a throw", () => {
    expect(parseJsonText(schema, '{"from":"a"}')).toEqual({ from: "a" });
    for (const text of ["null", "not json", "", "[]", '{"from":7}']) expect(parseJsonText(schema, text)).toBeUndefined();
  });
});
