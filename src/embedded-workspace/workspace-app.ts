import { randomUUID } from "node:crypto";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { z } from "zod";
import type { Clock } from "../util/clock.js";
import { composeAnswer } from "./compose-answer.js";
import { composeJsonAnswer, type JsonStyle } from "./compose-json.js";
import type { DocumentIndex } from "./document-index.js";
import { type InjectedFault, InjectedFaults, respondWithFault } from "./injected-faults.js";
import { encodeCursor, readPage } from "./pagination.js";
import { type QueryFault, QueryStore } from "./query-store.js";
import { createEmbeddedRealtime, type EmbeddedRealtime } from "./realtime/embedded-realtime.js";

/** Settings of the embedded workspace. */
export interface EmbeddedWorkspaceOptions {
  /** The documents' index, or how to get the current one (it is rebuilt when documents change). */
  index: DocumentIndex | (() => DocumentIndex);
  /** Workspace ids that exist; requests for others get 404. */
  workspaces: readonly string[];
  /** Accepted API keys; undefined accepts any non-empty bearer credential (documented as such). */
  apiKeys?: readonly string[];
  /** Pace of a query: a step every `stepDelayMs`, output chunks every half of it; 0 answers at once. */
  stepDelayMs: number;
  /** Name of the interaction-mode field of the create body. */
  modeField?: string;
  clock?: Clock;
  /** Offer a realtime channel with every query (default true); false leaves queries to polling. */
  realtime?: boolean;
}

/** What a test can read and steer of a running embedded workspace. */
export interface EmbeddedWorkspaceControl {
  /** Every `POST /queries` body accepted, in order, with its workspace. */
  readonly creates: { workspace: string; body: Record<string, unknown> }[];
  /** Calls by endpoint; `listWithCursor` counts list calls for a page after the first. */
  readonly calls: {
    create: number;
    list: number;
    listWithCursor: number;
    health: number;
    workspaces: number;
  };
  inject(fault: InjectedFault): void;
  clearFaults(): void;
  /** How questions with the adapter's instruction block are answered from now on (a test's switch; default `trailing-sources`). */
  answerJsonAs(style: JsonStyle): void;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * A faithful stand-in for the Workspace Knowledge Service (docs/architecture/upstream.md#the-embedded-workspace):
 * Health, Workspaces (list) and Queries (create, continue, list) over a folder of documents, with
 * the interface's 401/404/422 rules and pagination. Not a mock: it answers from real search.
 */
export function createEmbeddedWorkspace(options: EmbeddedWorkspaceOptions): {
  app: Express;
  control: EmbeddedWorkspaceControl;
  /** Its realtime channel, to serve on the HTTP server's `upgrade` (null when turned off). */
  realtime: EmbeddedRealtime | null;
} {
  const clock = options.clock ?? { now: () => Date.now() };
  const store = new QueryStore(options.stepDelayMs);
  const modeField = options.modeField ?? "mode";
  const realtime =
    options.realtime === false
      ? null
      : createEmbeddedRealtime({
        view: (query, at) => store.view(query, at),
        now: () => clock.now(),
        stepDelayMs: options.stepDelayMs,
      });
  const keys = options.apiKeys ? new Set(options.apiKeys) : null;
  const faults = new InjectedFaults();
  let jsonStyle: JsonStyle = "trailing-sources";
  const control: EmbeddedWorkspaceControl = {
    creates: [],
    calls: { create: 0, list: 0, listWithCursor: 0, health: 0, workspaces: 0 },
    inject: (fault) => faults.inject(fault),
    clearFaults: () => faults.clear(),
    answerJsonAs: (style) => {
      jsonStyle = style;
    },
  };
  const createSchema = z.looseObject({
    content: z.string(),
    id: z.string().regex(ID).optional(),
    [modeField]: z.enum(["ask", "reason", "build"]).optional(),
  });

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(express.json({ limit: "1mb" }));

  app.get("/health", (request, response) => {
    control.calls.health += 1;
    if (faults.answer("health", response)) return;
    response.json({ status: "ok", service: "embedded-workspace" });
  });

  app.get("/workspaces", authenticate, (request, response) => {
    control.calls.workspaces += 1;
    if (faults.answer("workspaces", response)) return;
    const page = readPage(request, response);
    if (!page) return;
    const start = page.cursor === undefined ? 0 : Number(page.cursor);
    const data = options.workspaces.slice(start, start + page.limit).map((id) => ({ id, name: id }));
    const next = start + page.limit < options.workspaces.length ? encodeCursor(start + page.limit) : null;
    response.json({ data, next_cursor: next, has_more: next !== null });
  });

  app.post("/queries", authenticate, requireWorkspace, (request, response) => {
    control.calls.create += 1;
    const workspace = response.locals.workspace as string;
    const parsed = createSchema.safeParse(request.body, { reportInput: true });
    if (!parsed.success) {
      response.status(422).json({
        detail: parsed.error.issues.map((issue) => ({
          loc: ["body", ...issue.path.map(String)],
          msg: issue.message,
          type:
            issue.code === "invalid_type" && "input" in issue && issue.input === undefined
              ? "missing"
              : issue.code,
        })),
      });
      return;
    }
    const body = parsed.data as Record<string, unknown> & { content: string; id?: string };
    const fault = faults.take("create");
    if (fault && fault.kind !== "drop-after-create" && respondWithFault(fault, response)) return;
    const id = body.id ?? randomUUID();
    const existing = store.get(id);
    if (existing && existing.workspace !== workspace) {
      response.status(404).json({ detail: "Query not found" });
      return;
    }
    const mode = (body[modeField] as "ask" | "reason" | "build" | undefined) ?? "ask";
    const previous = existing?.turns[existing.turns.length - 1];
    const queryFault = /\[fault:(failed|stall)\]/.exec(body.content)?.[1] as QueryFault | undefined;
    const prompt = body.content.replace(/\[fault:[a-z-]+\]/g, "").trim();
    const query = store.startTurn(workspace, id, {
      content: body.content,
      mode,
      startedAt: clock.now(),
      script: scriptOf(prompt, mode, previous?.content),
      fault: queryFault ?? null,
    });
    control.creates.push({ workspace, body });
    if (fault?.kind === "drop-after-create") {
      response.socket?.destroy();
      return;
    }
    // The create answer and the channel start from one view: what the answer shows, the channel does not publish again.
    const shown = store.view(query, clock.now());
    const channel = realtime?.open(query, shown, request.headers.authorization ?? "", request.headers.host);
    // The query object (not the list items) carries the answer's structured sources, when the mode has them.
    const { sources } = query.turns[query.turns.length - 1]?.script ?? { sources: [] };
    const structured = sources.length > 0 ? { sources } : {};
    response.json({ ...shown, run_id: randomUUID(), ...channel, ...structured });
  });

  app.get("/queries", authenticate, requireWorkspace, (request, response) => {
    control.calls.list += 1;
    if (request.query.cursor !== undefined) control.calls.listWithCursor += 1;
    if (faults.answer("list", response)) return;
    const page = readPage(request, response);
    if (!page) return;
    const before = page.cursor === undefined ? undefined : Number(page.cursor);
    const result = store.page(response.locals.workspace as string, page.limit, before);
    const now = clock.now();
    const next = result.next === null ? null : encodeCursor(result.next);
    response.json({
      data: result.items.map((query) => store.view(query, now)),
      next_cursor: next,
      has_more: next !== null,
    });
  });

  app.use((_request: Request, response: Response) => {
    response.status(404).json({ detail: "Not Found" });
  });
  app.use(
    (
      error: { type?: string; status?: number },
      _request: Request,
      response: Response,
      _next: NextFunction,
    ) => {
      if (error.type === "entity.parse.failed") {
        response
          .status(422)
          .json({ detail: [{ loc: ["body", 0], msg: "JSON decode error", type: "json_invalid" }] });
        return;
      }
      response
        .status(error.status && error.status < 500 ? error.status : 500)
        .json({ detail: "Internal error" });
    },
  );

  function authenticate(request: Request, response: Response, next: NextFunction): void {
    const match = /^Bearer\s+(\S+)$/.exec(request.headers.authorization ?? "");
    if (!match?.[1]) {
      response.status(401).json({ detail: "Not authenticated" });
      return;
    }
    if (keys && !keys.has(match[1])) {
      response.status(401).json({ detail: "Invalid API key" });
      return;
    }
    next();
  }

  function requireWorkspace(request: Request, response: Response, next: NextFunction): void {
    const workspace = request.headers["service-workspace"];
    if (typeof workspace !== "string" || workspace === "") {
      response
        .status(422)
        .json({ detail: [{ loc: ["header", "service-workspace"], msg: "Field required", type: "missing" }] });
      return;
    }
    if (!options.workspaces.includes(workspace)) {
      response.status(404).json({ detail: "Workspace not found" });
      return;
    }
    response.locals.workspace = workspace;
    next();
  }

  /** The turn's answer: JSON when the content carries the adapter's instruction block, prose otherwise. */
  function scriptOf(prompt: string, mode: "ask" | "reason" | "build", previousContent: string | undefined) {
    const index = typeof options.index === "function" ? options.index() : options.index;
    const json = composeJsonAnswer({ content: prompt, mode, previousContent }, index, jsonStyle, clock.now());
    return json ?? composeAnswer({ prompt, mode, previousPrompt: previousContent }, index);
  }

  return { app, control, realtime };
}
