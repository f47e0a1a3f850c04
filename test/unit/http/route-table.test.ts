import { describe, expect, it } from "vitest";
import { type Route, RouteTable } from "../../../src/http/route-table.js";

const route = (method: Route["method"], path: string): Route => ({ method, path, handler: { express: () => undefined }, operation: {} });

describe("RouteTable", () => {
  const table = new RouteTable([route("GET", "/v1/models"), route("GET", "/v1/models/{id+}"), route("POST", "/v1/things/{id}"), route("DELETE", "/v1/things/{id}")]);

  it("matches templates with one-segment and rest-of-path parameters, decoded", () => {
    expect(table.match("GET", "/v1/models/acme/ask")).toMatchObject({ kind: "route", params: { id: "acme/ask" } });
    expect(table.match("DELETE", "/v1/things/a%20b")).toMatchObject({ kind: "route", params: { id: "a b" } });
    expect(table.match("HEAD", "/v1/models")).toMatchObject({ kind: "route" });
    expect(table.match("GET", "/v1/things/a/b")).toEqual({ kind: "none" });
    expect(table.match("GET", "/nowhere")).toEqual({ kind: "none" });
  });

  it("says which methods a known path allows", () => {
    expect(table.match("GET", "/v1/things/x")).toEqual({ kind: "method-not-allowed", allowed: ["POST", "DELETE"] });
  });

  it("refuses a route declared twice, and writes OpenAPI paths from the templates", () => {
    expect(() => new RouteTable([route("GET", "/a"), route("GET", "/a")])).toThrow(/declared twice/);
    expect(Object.keys(table.openApiPaths())).toEqual(["/v1/models", "/v1/models/{id}", "/v1/things/{id}"]);
    expect(RouteTable.expressPath("/v1/models/{id+}")).toBe("/v1/models/*id");
  });
});
