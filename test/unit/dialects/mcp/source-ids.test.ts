import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_ID_SNIPPET, readSourceId, sourceId } from "../../../../src/dialects/mcp/source-ids.js";

describe("search result ids", () => {
  it("carry their source through any replica: what sourceId writes, readSourceId reads back", () => {
    const text = fc.oneof(fc.constant(null), fc.string({ maxLength: 200 }));
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), text, text, fc.oneof(fc.constant(null), fc.nat()), text, (workspace, filename, title, page, snippet) => {
        const source = { workspace, filename, title, page, snippet };
        const id = sourceId(source);
        expect(id).toMatch(/^wsrc_[A-Za-z0-9_-]+$/);
        expect(readSourceId(id)).toEqual(source);
      }),
    );
  });

  it("keep at most a bounded snippet, marked as cut", () => {
    const id = sourceId({ workspace: "acme", filename: "a.md", title: null, page: null, snippet: "x".repeat(5000) });
    const snippet = readSourceId(id)?.snippet as string;
    expect(snippet).toHaveLength(MAX_ID_SNIPPET);
    expect(snippet.endsWith("…")).toBe(true);
  });

  it("are refused when search did not make them", () => {
    for (const id of ["handbook.md", "wsrc_", "wsrc_!!", `wsrc_${Buffer.from("{}").toString("base64url")}`, `wsrc_${Buffer.from('["acme", 1, null, null, null]').toString("base64url")}`]) {
      expect(readSourceId(id)).toBeNull();
    }
  });
});
