import type { Logger } from "pino";
import type { SourceLinker } from "../../answer/source-links.js";
import type { Identity } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import { type BackgroundEnding, type BackgroundResponses, hasEnded } from "../../continuity/background/background-responses.js";
import { type BackgroundRecord, sequenceOf, UNNUMBERED } from "../../continuity/background/background-store.js";
import type { Resumption } from "../../continuity/background/resumption.js";
import type { Mode } from "../../core/modes.js";
import type { SseFrame } from "../../core/sse-frame.js";
import { TaskEncoder } from "../../dialects/mcp/task-encoder.js";
import { expired, TASK_ID, type TaskResume, taskResumeSchema, type TaskView, taskView } from "../../dialects/mcp/task-state.js";
import type { AnswerToolInput } from "../../dialects/mcp/tool-schemas.js";
import { RateLimitError } from "../../errors/adapter-error.js";
import type { Clock } from "../../util/clock.js";
import type { Ids } from "../../util/ids.js";
import type { Admitted } from "../admission.js";
import type { AnswerRunner } from "../answer-runner.js";
import { detached } from "../delivery/background-delivery.js";
import type { RequestContext } from "../request-context.js";
import { errorMessage } from "../../util/error-message.js";

/** The settings of MCP tasks (`MCP_TASK_*`, docs/configuration.md). */
export type TaskSettings = NonNullable<Config["mcp"]["tasks"]>;

/** What the tasks are built from: the runner, the background answers, and the edge's effects. */
export interface McpTasksOptions {
  runner: AnswerRunner;
  background: BackgroundResponses;
  settings: TaskSettings;
  clock: Clock;
  ids: Ids;
  logger: Logger;
  /** The source links of a workspace (the same wherever the task runs). */
  links(workspace: string): SourceLinker;
}

/** Who asks about a task: their identity (only their own tasks exist for them) and this request's admission (handed to a takeover). */
export interface TaskCaller {
  identity: Identity;
  workspace: string;
  admission: Admitted;
}

/** A task to start: the call's question in its mode, on behalf of an admitted request (its context, not its response: the task outlives it). */
export interface NewTask extends TaskCaller {
  context: RequestContext;
  tool: string;
  mode: Mode;
  input: AnswerToolInput;
  /** The TTL the client asked for, in ms (capped at `maxTtlMs`). */
  ttlMs: number | undefined;
  /** The workspace the result's `fetch` ids name, when the host shows the answer card. */
  cardWorkspace: string | null;
}

/** The events that end a task's log: its encoder's two, and a cancel's. */
const TASK_TERMINALS = ["task.completed", "task.failed", "task.cancelled"] as const;
type TaskTerminal = (typeof TASK_TERMINALS)[number];

/** Whether a frame ends a task's log: a follow waiting for its end stops there. */
function isTaskTerminal(frame: SseFrame): boolean {
  const type = (frame.data as { type?: unknown }).type;
  return typeof type === "string" && (TASK_TERMINALS as readonly string[]).includes(type);
}

/** How often a waiting `tasks/result` looks whether its task's replica is still there. */
const RECHECK_MS = 1000;

/** What `cancel` found. */
export type Cancelled = { cancelled: true; view: TaskView } | { cancelled: false; view: TaskView };

/**
 * MCP tasks (docs/mcp.md#long-answers-as-tasks): a task is a background answer of the runner, its
 * id the record's (`task_…`, unguessable), bound to the caller's credential, written to the store
 * (Redis when configured) before the client hears of it; so any replica reads, follows and cancels
 * it, and a replica's death is survived by the takeover background answers already have: the next
 * request about it on another replica carries it on (`runner.resume`). Counts the tasks each
 * credential runs on this replica, against `perCredential`.
 */
export class McpTasks {
  private readonly runningBy = new Map<string, number>();
  private readonly resumption: Resumption<TaskResume>;

  constructor(private readonly options: McpTasksOptions) {
    const now = () => options.clock.now();
    this.resumption = {
      schema: taskResumeSchema,
      resume: (state, frames) => {
        const encoder = TaskEncoder.resumed(state, options.links(state.workspace), now, frames);
        return { encoder, prompt: state.prompt, mode: state.mode, remember: async () => undefined };
      },
      refused: (record, message) => this.ended(record, { status: "failed", error: { code: "server_error", message } }, "task.failed", { message }),
    };
  }

  /**
   * Starts a task: the question asked through the runner into a background log, the record durable
   * before this resolves. Refused (429) when the credential already runs `perCredential` here: its
   * place is taken at that check, before the workspace is asked, so that calls at once cannot all
   * pass it; and given back when the task does not start.
   */
  async create(task: NewTask): Promise<TaskView> {
    const { settings } = this.options;
    const { principal } = task.identity;
    if ((this.runningBy.get(principal) ?? 0) >= settings.perCredential) {
      throw new RateLimitError(`Too many tasks running for this credential (${settings.perCredential}, MCP_TASKS_PER_CREDENTIAL); wait for one to end`, { headers: { "retry-after": "1" } });
    }
    const place = this.take(principal);
    let started: { id: string; record: BackgroundRecord };
    try {
      started = await this.start(task, place);
    } catch (error) {
      place();
      throw error;
    }
    // The encoder's own object, in progress: it always parses (the task runs on whatever this says).
    const view = taskView(started.id, started.record.response, []);
    if (!view) throw new Error("a new task's state does not parse");
    return view;
  }

  /** A task's answer started through the runner, its place under the cap held by the answer until it ends. */
  private async start(task: NewTask, place: () => void): Promise<{ id: string; record: BackgroundRecord }> {
    const { runner, background, settings, clock, ids } = this.options;
    const { principal } = task.identity;
    const id = ids.object("task");
    const ttlMs = Math.min(task.ttlMs ?? settings.ttlMs, settings.maxTtlMs);
    const head: TaskResume = {
      mode: task.mode,
      prompt: task.input.question,
      workspace: task.workspace,
      cardWorkspace: task.cardWorkspace,
      createdAt: new Date(clock.now()).toISOString(),
      ttlMs,
      pollIntervalMs: settings.pollIntervalMs,
    };
    const encoder = new TaskEncoder(head, this.options.links(task.workspace), () => clock.now());
    const admission = this.counted(task.admission, place);
    const input = { prompt: task.input.question, mode: task.mode, choices: 1, continueQueryId: task.input.query_id ?? null };
    const spanStart = { operation: "execute_tool", tool: task.tool, model: task.mode, stream: false } as const;
    const { context, identity, workspace } = task;
    const namesQuery = Boolean(task.input.query_id);
    const planned = runner.plan({ context, identity, workspace, meter: task.admission.meter, input, namesQuery, spanStart });
    const record = { id, principal, workspace: task.workspace, queryId: planned.queryId, resume: head };
    const delivery = detached(encoder, { responses: background, record, admission });
    const started = await runner.run(planned, delivery, { respondedAs: id });
    return { id, record: started };
  }

  /**
   * A task this caller may see, as it stands, or null (none of that id for this credential, or its
   * TTL ran out). One whose replica is gone is taken over here first.
   */
  async find(taskId: string, caller: TaskCaller): Promise<{ record: BackgroundRecord; view: TaskView } | null> {
    const { background, clock } = this.options;
    if (!TASK_ID.test(taskId)) return null;
    let record = await background.visible(taskId, caller.identity.principal, undefined);
    if (!record) return null;
    if (!hasEnded(record.response) && !background.runsHere(record.id) && (await this.takeOver(record, caller))) {
      record = (await background.visible(taskId, caller.identity.principal, undefined)) ?? record;
    }
    const view = taskView(record.id, record.response, hasEnded(record.response) ? [] : await background.events(record.id));
    if (!view || expired(view, clock.now())) return null;
    return { record, view };
  }

  /**
   * Waits until a task has ended (or `signal` aborts), following its log whichever replica writes
   * it; every `RECHECK_MS` it looks again, and takes the task over when its replica is gone (a
   * follower would otherwise wait on a log nobody writes).
   */
  async untilEnded(taskId: string, caller: TaskCaller, signal: AbortSignal): Promise<void> {
    const { background, clock } = this.options;
    let after = -1;
    while (!signal.aborted) {
      const found = await this.find(taskId, caller);
      if (!found || found.view.status !== "working") return;
      const pause = new AbortController();
      const stop = () => pause.abort();
      signal.addEventListener("abort", stop, { once: true });
      const timer = clock.setTimeout(stop, RECHECK_MS);
      try {
        for await (const frame of background.follow(taskId, after, pause.signal, isTaskTerminal)) after = sequenceOf(frame);
      } finally {
        clock.clearTimeout(timer);
        signal.removeEventListener("abort", stop);
      }
    }
  }

  /** Cancels a task from any replica: it is `cancelled` before this resolves, unless it had ended. */
  async cancel(found: { record: BackgroundRecord; view: TaskView }): Promise<Cancelled> {
    const { record } = found;
    const at = new Date(this.options.clock.now()).toISOString();
    const ending = this.ended(record, { status: "cancelled", lastUpdatedAt: at, statusMessage: "Cancelled by the client" }, "task.cancelled", {});
    const outcome = await this.options.background.cancel(record, ending);
    const view = taskView(record.id, outcome.response, []) ?? found.view;
    return { cancelled: outcome.cancelled, view };
  }

  /**
   * How a task ends when its answer does not end it (a cancel, a takeover refused): its object with
   * `change`, and one terminal event of its log (nothing reads a task's log once it has ended but a
   * follow waiting for that end).
   */
  private ended(
    record: BackgroundRecord,
    change: { status: string } & Record<string, unknown>,
    type: TaskTerminal,
    fields: Record<string, string>,
  ): BackgroundEnding {
    const at = new Date(this.options.clock.now()).toISOString();
    const frame: SseFrame = { event: type, data: { type, sequence_number: UNNUMBERED, at, ...fields } };
    return { response: { ...record.response, ...change }, frames: [frame] };
  }

  /** Takes over a task whose replica is gone (its lease ran out), with this request's admission handed to it. */
  private async takeOver(record: BackgroundRecord, caller: TaskCaller): Promise<boolean> {
    // Counted without the cap's check: the task is running already, wherever it ran before.
    const place = this.take(record.principal);
    try {
      const admission = this.counted(caller.admission, place);
      const taken = await this.options.runner.resume(record, { identity: caller.identity, admission }, this.resumption);
      if (!taken) place();
      return taken;
    } catch (error) {
      place();
      this.options.logger.warn({ taskId: record.id, err: { message: errorMessage(error) } }, "task could not be taken over");
      return false;
    }
  }

  /** Counts a task of `principal` against its cap now: the place, given back once (however often it is called). */
  private take(principal: string): () => void {
    this.runningBy.set(principal, (this.runningBy.get(principal) ?? 0) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.runningBy.get(principal) ?? 1) - 1;
      if (left > 0) this.runningBy.set(principal, left);
      else this.runningBy.delete(principal);
    };
  }

  /** The admission of a task that runs here: handed over to its answer, which gives its place back when it ends. */
  private counted(admission: Admitted, place: () => void): Admitted {
    return {
      ...admission,
      handOver: () => {
        const release = admission.handOver();
        return () => {
          release();
          place();
        };
      },
    };
  }
}
