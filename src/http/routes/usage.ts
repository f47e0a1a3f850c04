import { z } from "zod";
import type { AdminCheck } from "../../auth/admin-keys.js";
import { RequestValidationError, UnsupportedParameterError, type ValidationIssue } from "../../errors/adapter-error.js";
import { foldBrackets, GROUP_FIELDS, usageQuerySchema } from "../../usage/usage-query.js";
import { pageDays, usagePage, usagePageSchema } from "../../usage/usage-report.js";
import type { UsageLedger } from "../../usage/usage-ledger.js";
import type { Clock } from "../../util/clock.js";
import { sendJson } from "../error-response.js";
import { errorResponse } from "../openapi.js";
import { type Route, type RouteCall, route } from "../route-table.js";
import { toValidationIssues } from "../validation-issues.js";

/** What the usage endpoint reads. */
export interface UsageRouteOptions {
  ledger: UsageLedger;
  /** `ADMIN_API_KEYS`: who may read usage. */
  admin: AdminCheck;
  clock: Clock;
}

const list = (name: string, description: string) => ({ name, in: "query", description, schema: { type: "array", items: { type: "string" } } });

/**
 * A usage query's problems as 422 items; a parameter it does not read is named on its own
 * (`extra_forbidden`, as FastAPI words it), never ignored: a filter it did not read would widen the answer.
 */
function queryIssues(issues: readonly z.core.$ZodIssue[], query: Record<string, unknown>): ValidationIssue[] {
  return issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((name) => ({ loc: ["query", name], msg: "Extra inputs are not permitted: the usage endpoint does not read this parameter", type: "extra_forbidden", input: query[name] }))
      : toValidationIssues([issue], "query"),
  );
}

/**
 * `GET /v1/organization/usage/completions` (docs/governance.md#usage): usage per workspace, key (or
 * gateway identity) and mode in the shape of OpenAI's Usage API, so that the notebooks and
 * exporters written for OpenAI's read it; day buckets only. A key of `ADMIN_API_KEYS` only.
 */
export function usageRoutes(options: UsageRouteOptions): Route[] {
  async function read({ request, response, query: parameters }: RouteCall): Promise<void> {
    options.admin(request);
    const folded = foldBrackets(parameters);
    const parsed = usageQuerySchema.safeParse(folded);
    if (!parsed.success) throw new RequestValidationError(queryIssues(parsed.error.issues, folded));
    const query = parsed.data;
    if (query.bucket_width !== "1d") {
      throw new UnsupportedParameterError(`bucket_width '${query.bucket_width}' is not available: this adapter counts usage per UTC day (1d)`, "bucket_width");
    }
    const { days, more } = pageDays(query, options.clock.now());
    const totals = await options.ledger.totals(days);
    response.setHeader("cache-control", "no-store");
    sendJson(response, usagePage(query, days, more, totals));
  }

  return [
    route("GET", "/v1/organization/usage/completions", read, {
      summary: "Tokens and answers per UTC day, by workspace (`project_id`), key or gateway identity (`api_key_id`) and mode (`model`), in OpenAI's Usage API shape; ADMIN_API_KEYS only",
      security: [{ bearer: [] }],
      parameters: [
        { name: "start_time", in: "query", required: true, description: "Unix seconds; the first bucket is the UTC day it falls in", schema: { type: "integer" } },
        { name: "end_time", in: "query", description: "Unix seconds, exclusive (default: now)", schema: { type: "integer" } },
        { name: "bucket_width", in: "query", description: "`1d` (the only width counted)", schema: { type: "string", enum: ["1d"] } },
        list("project_ids", "Only these workspaces"),
        list("api_key_ids", "Only these keys' names or gateway identities"),
        list("models", "Only these modes"),
        { name: "group_by", in: "query", schema: { type: "array", items: { type: "string", enum: [...GROUP_FIELDS] } } },
        { name: "limit", in: "query", description: "Buckets per page: 1 to 31 (default 7)", schema: { type: "integer" } },
        { name: "page", in: "query", description: "`next_page` of the page before", schema: { type: "string" } },
      ],
      responses: {
        "200": { description: "A page of day buckets", content: { "application/json": { schema: z.toJSONSchema(usagePageSchema) } } },
        "401": errorResponse("No credential"),
        "403": errorResponse("A credential that is not an admin key"),
        "503": errorResponse("The usage store (Redis) does not answer"),
      },
    }),
  ];
}
