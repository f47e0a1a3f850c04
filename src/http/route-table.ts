import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";

/** The HTTP methods the adapter answers. */
export type Method = "GET" | "POST" | "DELETE";

/**
 * A handler on plain `node:http`, for hot routes that skip Express's router and request
 * decoration; `params` are the path template's values.
 */
export type FastHandler = (request: IncomingMessage, response: ServerResponse, params?: Record<string, string>) => void;

/**
 * One route: its method and path template, said once, and everything derived from them. Path
 * templates use `{name}` for one segment and `{name+}` (last) for the rest of the path.
 */
export interface Route {
  method: Method;
  path: string;
  /** The hot path's `node:http` handler, or an Express handler (everything else). */
  handler: { fast: FastHandler } | { express: RequestHandler };
  /** Its OpenAPI operation object (summary, parameters, responses…), for /openapi.json. */
  operation: Record<string, unknown>;
}

/** What a request's method and path match: a route and its parameters, a path with other methods, or nothing. */
export type RouteMatch =
  | { kind: "route"; route: Route; params: Record<string, string>; label: string }
  | { kind: "method-not-allowed"; allowed: Method[] }
  | { kind: "none" };

interface CompiledPath {
  template: string;
  label: string;
  pattern: RegExp;
  names: string[];
  routes: Map<string, Route>;
}

/**
 * The one route table (docs/architecture.md#modules): dispatch, the 405s' `Allow`, metric labels
 * (each route's template: a fixed set) and the OpenAPI document's paths all read it.
 */
export class RouteTable {
  private readonly paths: CompiledPath[] = [];

  constructor(readonly routes: readonly Route[]) {
    for (const route of routes) {
      let compiled = this.paths.find((path) => path.template === route.path);
      if (!compiled) {
        const names: string[] = [];
        const source = route.path.replace(/[.*?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)(\+?)\}/g, (_, name: string, rest: string) => {
          names.push(name);
          return rest ? "(.+)" : "([^/]+)";
        });
        compiled = { template: route.path, label: RouteTable.label(route.path), pattern: new RegExp(`^${source}$`), names, routes: new Map() };
        this.paths.push(compiled);
      }
      if (compiled.routes.has(route.method)) throw new Error(`Route ${route.method} ${route.path} is declared twice`);
      compiled.routes.set(route.method, route);
    }
  }

  /** The route a method and path name; HEAD is answered as GET, as Express does. */
  match(method: string | undefined, path: string): RouteMatch {
    for (const compiled of this.paths) {
      const found = compiled.pattern.exec(path);
      if (!found) continue;
      const route = compiled.routes.get(method === "HEAD" ? "GET" : (method ?? ""));
      if (!route) return { kind: "method-not-allowed", allowed: [...compiled.routes.keys()] as Method[] };
      const params: Record<string, string> = {};
      compiled.names.forEach((name, index) => {
        params[name] = safeDecode(found[index + 1] ?? "");
      });
      return { kind: "route", route, params, label: compiled.label };
    }
    return { kind: "none" };
  }

  /** A route's template as OpenAPI and metric labels write it (`/v1/models/{id}`). */
  static label(template: string): string {
    return template.replace(/\{(\w+)\+\}/g, "{$1}");
  }

  /** OpenAPI `paths`: each template with its operations. */
  openApiPaths(): Record<string, Record<string, unknown>> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const compiled of this.paths) {
      const template = RouteTable.label(compiled.template);
      const operations = [...compiled.routes].map(([method, route]) => [method.toLowerCase(), route.operation]);
      paths[template] = Object.fromEntries(operations);
    }
    return paths;
  }

  /** The Express path of a template (`/v1/models/{id+}` → `/v1/models/*id`). */
  static expressPath(template: string): string {
    return template.replace(/\{(\w+)\+\}/g, "*$1").replace(/\{(\w+)\}/g, ":$1");
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
