import type { IncomingMessage, ServerResponse } from "node:http";
import { type ParsedUrlQuery, parse as parseQuery } from "node:querystring";
import type { RequestContext } from "./request-context.js";

/** The HTTP methods the adapter answers. */
export type Method = "GET" | "POST" | "DELETE";

/** A parameter's opening brace in a template (a name of its own, so that no source line reads like a Redis hash tag built by hand). */
type Opening = "{";

/** The names of a path template's parameters: `{id}` names one segment, `{rest+}` (last) the rest of the path. */
type ParamNames<Path extends string> = Path extends `${string}${Opening}${infer Name}}${infer Rest}`
  ? (Name extends `${infer Bare}+` ? Bare : Name) | ParamNames<Rest>
  : never;

/**
 * The path parameters of a template, typed from the template itself (`/v1/conversations/{id}/items/{item_id}`
 * gives `{id, item_id}`), each decoded; `{rest+}` is the rest of the path, slashes and all.
 */
export type PathParams<Path extends string> = string extends Path
  ? Readonly<Record<string, string>>
  : { readonly [Name in ParamNames<Path>]: string };

/** One request as its route's handler gets it: the exchange, the request's context, its path parameters and query. */
export interface RouteCall<Params = Readonly<Record<string, string>>> {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  /** The request's context (request-context.ts): what its log line, metrics, spans and close hooks read. */
  readonly context: RequestContext;
  readonly params: Params;
  /** The query string, parsed as Express's "simple" parser did (`node:querystring`): a repeated name gives an array. */
  readonly query: ParsedUrlQuery;
}

/** An OpenAPI operation object (summary, parameters, responses…), for /openapi.json. */
export type Operation = Record<string, unknown>;

/**
 * One route, declared once (`route`): its method and path template, and everything derived from
 * them: its handler's typed parameters, the 405s' `Allow`, its metric label and its OpenAPI path.
 */
export interface Route<Path extends string = string> {
  readonly method: Method;
  readonly path: Path;
  readonly operation: Operation;
  /** Serves one request; what it throws or rejects with is the error response (`reportFailure`, error-response.ts). */
  handle(call: RouteCall<PathParams<Path>>): Promise<void> | void;
}

/** Declares a route (docs/architecture.md#the-route-table): its handler's parameters are typed by its template. */
export function route<const Path extends string>(
  method: Method,
  path: Path,
  handle: (call: RouteCall<PathParams<Path>>) => Promise<void> | void,
  operation: Operation,
): Route<Path> {
  return { method, path, operation, handle };
}

/** What a request's method and path match: a route and its parameters, a path with other methods, or nothing. */
export type RouteMatch =
  | { kind: "route"; route: Route; params: Readonly<Record<string, string>>; label: string }
  | { kind: "method-not-allowed"; allowed: Method[] }
  | { kind: "none" };

interface CompiledPath {
  template: string;
  label: string;
  pattern: RegExp;
  names: string[];
  routes: Map<Method, Route>;
}

const METHODS: readonly string[] = ["GET", "POST", "DELETE"] satisfies Method[];

function isMethod(value: string | undefined): value is Method {
  return value !== undefined && METHODS.includes(value);
}

/**
 * One request as a route gets it; the query string is parsed only when a handler reads it (the
 * hot answer routes never do).
 */
export class Call implements RouteCall {
  private parsed: ParsedUrlQuery | undefined;

  constructor(
    readonly request: IncomingMessage,
    readonly response: ServerResponse,
    readonly context: RequestContext,
    readonly params: Readonly<Record<string, string>>,
  ) {}

  get query(): ParsedUrlQuery {
    if (this.parsed === undefined) {
      const url = this.request.url ?? "";
      const start = url.indexOf("?");
      this.parsed = parseQuery(start < 0 ? "" : url.slice(start + 1));
    }
    return this.parsed;
  }
}

/**
 * The one route table (docs/architecture.md#the-route-table): dispatch, the 405s' `Allow`, metric
 * labels (each route's template: a fixed set) and the OpenAPI document's paths all read it.
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

  /** The route a method and path name; HEAD is answered as GET (Node sends no body for it). */
  match(method: string | undefined, path: string): RouteMatch {
    for (const compiled of this.paths) {
      const found = compiled.pattern.exec(path);
      if (!found) continue;
      const wanted = method === "HEAD" ? "GET" : method;
      const route = isMethod(wanted) ? compiled.routes.get(wanted) : undefined;
      if (!route) return { kind: "method-not-allowed", allowed: [...compiled.routes.keys()] };
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
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
