import { describe, expect, it } from "vitest";
import { citeSources } from "../../../src/answer/cite-sources.js";
import { citationsInStrings, stripCitationMarkers } from "../../../src/answer/json-citations.js";

const output = '{"counts": [1, 2], "summary": "Leave is 25 days [1]. Travel 😀 is booked [2].", "note": "see [1, 2]"}\n\nSources:\n[1] leave.md\n[2] travel.md';
const json = output.slice(0, output.indexOf("\n\nSources:"));

describe("citations of a structured answer", () => {
  it("are the markers inside the JSON's strings, never a JSON array that reads like one", () => {
    const { citations } = citeSources(output, []);
    const inside = citationsInStrings(json, citations);
    const marked = inside.map((citation) => [...json].slice(citation.start, citation.end).join(""));
    expect(marked).toEqual(["[1]", "[2]", "[1, 2]", "[1, 2]"]);
    expect(citations.length).toBeGreaterThan(inside.length);
  });

  it("can be stripped from the strings, leaving JSON", () => {
    const { citations } = citeSources(output, []);
    const stripped = stripCitationMarkers(json, citations);
    expect(JSON.parse(stripped)).toEqual({ counts: [1, 2], summary: "Leave is 25 days. Travel 😀 is booked.", note: "see" });
  });
});
