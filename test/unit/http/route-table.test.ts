import { describe, expect, expectTypeOf, it } from "vitest";
import { type Method, type PathParams, route as declare, RouteTable } from "../../../src/http/route-table.js";

const route = (method: Method, path: string) => declare(method, path, () => undefined, {});

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
    expect(table.match("PATCH", "/v1/things/x")).toEqual({ kind: "method-not-allowed", allowed: ["POST", "DELETE"] });
  });

  it("refuses a route declared twice, and writes OpenAPI paths from the templates", () => {
    expect(() => new RouteTable([route("GET", "/a"), route("GET", "/a")])).toThrow(/declared twice/);
    expect(Object.keys(table.openApiPaths())).toEqual(["/v1/models", "/v1/models/{id}", "/v1/things/{id}"]);
  });
});

describe("a route's path parameters", () => {
  it("are typed from its template: one per `{name}`, the rest of the path for `{name+}`, none for a template without", () => {
    expectTypeOf<PathParams<"/v1/conversations/{id}/items/{item_id}">>().toEqualTypeOf<{ readonly id: string; readonly item_id: string }>();
    expectTypeOf<PathParams<"/documents/{workspace}/{path+}">>().toEqualTypeOf<{ readonly workspace: string; readonly path: string }>();
    expectTypeOf<PathParams<"/v1/models">>().toEqualTypeOf<Record<never, never>>();
    const declared = declare("GET", "/v1/responses/{id}/input_items", ({ params }) => {
      expectTypeOf(params).toEqualTypeOf<{ readonly id: string }>();
    }, {});
    expect(new RouteTable([declared]).match("GET", "/v1/responses/resp_1/input_items")).toMatchObject({ params: { id: "resp_1" } });
  });
});
