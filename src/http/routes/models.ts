import type { Authenticator } from "../../auth/authenticate.js";
import { MODES } from "../../core/modes.js";
import { credentialHash } from "../../auth/credential-hash.js";
import { NotFoundError } from "../../errors/adapter-error.js";
import { MODEL_CAPABILITIES, type Model } from "../../dialects/model-schema.js";
import { sendJson } from "../error-response.js";
import { type Route, type RouteCall, route } from "../route-table.js";
import { errorResponse } from "../openapi.js";
import { MODEL_PATTERN } from "../../core/model.js";
import { followPages, type PageRequest } from "../../upstream/follow-pages.js";
import type { WorkspaceClient } from "../../upstream/workspace-client.js";
import type { Clock } from "../../util/clock.js";
import { ID_PATTERN } from "../../core/ids.js";

/** What the models route needs. */
export interface ModelsRouteOptions {
  created: number;
  authenticate: Authenticator;
  client: WorkspaceClient;
  clock: Clock;
  cacheSeconds: number;
  /** Time allowed for listing workspaces before answering with the plain modes. */
  listTimeoutMs?: number;
  maxPages?: number;
}

const MAX_CACHED_CREDENTIALS = 1000;

/**
 * `GET /v1/models` and `/v1/models/{id}`: the interaction modes, and `<workspace>/<mode>` for each
 * workspace the credential can list (`GET /workspaces`, followed page by page), so chat UIs can
 * offer workspaces as models. The list is cached briefly per credential; a slow or failing
 * upstream costs at most `listTimeoutMs` and yields the three plain modes.
 */
export function modelsRoutes(options: ModelsRouteOptions): Route[] {
  const listTimeoutMs = options.listTimeoutMs ?? 1500;
  const maxPages = options.maxPages ?? 10;
  const cache = new Map<string, { workspaces: Promise<string[]>; expiresAt: number }>();
  const model = (id: string): Model => ({ id, object: "model", created: options.created, owned_by: "workspace", ...MODEL_CAPABILITIES, supported_openai_params: [...MODEL_CAPABILITIES.supported_openai_params] });

  async function listWorkspaces(credential: string): Promise<string[]> {
    const signal = AbortSignal.timeout(listTimeoutMs);
    const ids: string[] = [];
    const list = (request: PageRequest) => options.client.listWorkspaces(credential, request, signal);
    for await (const page of followPages(list, maxPages)) ids.push(...page.ids.filter((id) => ID_PATTERN.test(id)));
    return [...new Set(ids)];
  }

  function workspacesOf(credential: string): Promise<string[]> {
    const key = credentialHash(credential);
    const now = options.clock.now();
    const cached = cache.get(key);
    if (cached && cached.expiresAt > now) return cached.workspaces;
    const workspaces = listWorkspaces(credential).catch(() => {
      // A failure is remembered for a few seconds only, so a dead upstream is not asked on every call.
      const entry = cache.get(key);
      if (entry) entry.expiresAt = Math.min(entry.expiresAt, options.clock.now() + 5000);
      return [] as string[];
    });
    cache.delete(key);
    cache.set(key, { workspaces, expiresAt: now + options.cacheSeconds * 1000 });
    if (cache.size > MAX_CACHED_CREDENTIALS) cache.delete(cache.keys().next().value as string);
    return workspaces;
  }

  async function list({ request, response }: RouteCall): Promise<void> {
    const identity = options.authenticate(request);
    const workspaces = await workspacesOf(identity.upstreamCredential);
    const ids = [...MODES, ...workspaces.flatMap((workspace) => MODES.map((mode) => `${workspace}/${mode}`))];
    sendJson(response, { object: "list", data: ids.map(model) });
  }
  function one({ request, response, params }: RouteCall<{ readonly id: string }>): void {
    options.authenticate(request);
    // `{id+}`: the rest of the path, `<workspace>/<mode>` included.
    const { id } = params;
    if (!MODEL_PATTERN.test(id)) {
      throw new NotFoundError(`The model '${id}' does not exist`, { param: "model", code: "model_not_found" });
    }
    sendJson(response, model(id));
  }
  return [
    route("GET", "/v1/models", list, {
      summary: `The modes (${MODES.join(", ")}) and <workspace>/<mode> for each listed workspace`,
      security: [{ bearer: [] }],
      responses: {
        "200": { description: "Models", content: { "application/json": { schema: { $ref: "#/components/schemas/ModelList" } } } },
        "401": errorResponse("No bearer credential"),
      },
    }),
    route("GET", "/v1/models/{id+}", one, {
      summary: "One model",
      security: [{ bearer: [] }],
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": { description: "The model", content: { "application/json": { schema: { $ref: "#/components/schemas/Model" } } } },
        "404": errorResponse("No such model"),
      },
    }),
  ];
}
