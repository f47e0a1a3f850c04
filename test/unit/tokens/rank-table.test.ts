import { describe, expect, it } from "vitest";
import { o200kRanks, parseTiktoken, rankOf } from "../../../src/tokens/rank-table.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("parseTiktoken", () => {
  it("reads base64 tokens with their ranks, gaps allowed", () => {
    const table = parseTiktoken(["YQ== 0", "Yg== 1", "YWI= 5", "w6k= 2", ""].join("\n"));
    expect(table.size).toBe(4);
    expect(rankOf(table, bytes("a"), 0, 1)).toBe(0);
    expect(rankOf(table, bytes("ab"), 0, 2)).toBe(5);
    expect(rankOf(table, bytes("é"), 0, 2)).toBe(2);
    expect(rankOf(table, bytes("xaby"), 1, 3)).toBe(5);
    expect(rankOf(table, bytes("ba"), 0, 2)).toBe(-1);
  });

  it("rejects a line without a rank", () => {
    expect(() => parseTiktoken("YQ==\n")).toThrow(/bad line/);
    expect(() => parseTiktoken("YQ== x\n")).toThrow(/bad rank/);
  });

  it("holds o200k_base: 199,998 tokens in about 11 MB of typed arrays", () => {
    const table = o200kRanks();
    expect(table.size).toBe(199_998);
    expect(rankOf(table, bytes("!"), 0, 1)).toBe(0);
    expect(rankOf(table, bytes(" one"), 0, 4)).toBe(1001);
    const total = table.bytes.byteLength + table.tokenStart.byteLength + table.slots.byteLength;
    expect(total).toBeLessThan(12 * 2 ** 20);
  });
});
