import { describe, expect, it } from "vitest";
import { numberSources } from "../../../src/answer/source-numbers.js";
import type { SourceRecord } from "../../../src/core/source-record.js";

const source = (filename: string, page: number | null = null): SourceRecord => ({ filename, title: null, page, snippet: null });

describe("numberSources", () => {
  it("numbers sources as the output's references list does, and leaves that list out of the body", () => {
    const output = "Leave is 25 days [2]. Claims need receipts [1].\n\nSources:\n[1] expenses.txt\n[2] handbook.md — Leave";
    const numbered = numberSources(output, [source("handbook.md"), source("expenses.txt")]);
    expect(numbered.body).toBe("Leave is 25 days [2]. Claims need receipts [1].");
    expect(numbered.numbers).toEqual([2, 1]);
  });

  it("numbers structured sources by their position when the output lists none", () => {
    const output = "Leave is 25 days [1, 2].";
    expect(numberSources(output, [source("handbook.pdf", 4), source("policy.md")])).toEqual({ body: output, numbers: [1, 2] });
  });

  it("gives sources the list does not number the next free numbers, never one twice", () => {
    const output = "A [1] and [3].\n\nReferences:\n[1] a.md\n[3] b.md";
    expect(numberSources(output, [source("c.md"), source("a.md"), source("b.md"), source("d.md")]).numbers).toEqual([2, 1, 3, 4]);
  });
});
