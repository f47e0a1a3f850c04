import type { AnswerScript, EmbeddedMode } from "./compose-answer.js";

/** A query-level fault asked for in the query text (`[fault:failed]`, `[fault:stall]`). */
export type QueryFault = "failed" | "stall" | null;

/** One turn of a query thread: what was asked, and the script it plays out over time. */
export interface Turn {
  content: string;
  mode: EmbeddedMode;
  startedAt: number;
  script: AnswerScript;
  fault: QueryFault;
}

/** A query thread of one workspace. */
export interface StoredQuery {
  id: string;
  workspace: string;
  /** Order of last activity: lists are newest first by this. */
  sequence: number;
  turns: Turn[];
}

/** A query as the interface shows it (docs/architecture/upstream.md#queries; list items carry only these fields). */
export interface QueryView {
  id: string;
  content: string;
  status: "PENDING" | "PROCESSING" | "PROCESSED" | "FAILED";
  output: string;
  steps: unknown[];
}

/**
 * The embedded workspace's queries. A turn's state is derived from the time since it started
 * (PENDING → PROCESSING with steps appearing → output growing → PROCESSED), so thousands of
 * queries cost no timers, and any moment can be read consistently.
 */
export class QueryStore {
  private readonly queries = new Map<string, StoredQuery>();
  private readonly byWorkspace = new Map<string, StoredQuery[]>();
  private sequence = 0;

  constructor(private readonly stepDelayMs: number) {}

  get(id: string): StoredQuery | undefined {
    return this.queries.get(id);
  }

  /** Starts a new query, or a new turn of an existing one (which moves it to the top of its list). */
  startTurn(workspace: string, id: string, turn: Turn): StoredQuery {
    let query = this.queries.get(id);
    if (query) {
      const list = this.byWorkspace.get(workspace) ?? [];
      list.splice(list.indexOf(query), 1);
      query.turns.push(turn);
    } else {
      query = { id, workspace, sequence: 0, turns: [turn] };
      this.queries.set(id, query);
    }
    this.sequence += 1;
    query.sequence = this.sequence;
    const list = this.byWorkspace.get(workspace) ?? [];
    list.push(query);
    this.byWorkspace.set(workspace, list);
    return query;
  }

  /** A page of a workspace's queries, newest activity first, after the position `before` (exclusive). */
  page(
    workspace: string,
    limit: number,
    before: number | undefined,
  ): { items: StoredQuery[]; next: number | null } {
    const list = this.byWorkspace.get(workspace) ?? [];
    let end = list.length;
    if (before !== undefined) {
      // The list is sorted by sequence ascending; find the first entry at or after `before`.
      let low = 0;
      let high = list.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if ((list[middle] as StoredQuery).sequence < before) low = middle + 1;
        else high = middle;
      }
      end = low;
    }
    const start = Math.max(0, end - limit);
    const items = list.slice(start, end).reverse();
    return { items, next: start > 0 ? (items[items.length - 1]?.sequence ?? null) : null };
  }

  /** The query as it is at `now`. */
  view(query: StoredQuery, now: number): QueryView {
    const turn = query.turns[query.turns.length - 1] as Turn;
    return { id: query.id, content: turn.content, ...this.turnState(turn, now) };
  }

  private turnState(turn: Turn, now: number): Omit<QueryView, "id" | "content"> {
    const delay = this.stepDelayMs;
    const elapsed = now - turn.startedAt;
    const { steps, output } = turn.script;
    if (delay > 0 && elapsed < delay) return { status: "PENDING", output: "", steps: [] };
    const stepsShown = delay === 0 ? steps.length : Math.min(steps.length, Math.floor(elapsed / delay));
    const visibleSteps = steps.slice(0, stepsShown);
    const outputStart = (steps.length + 1) * delay;
    if (turn.fault === "stall" || (delay > 0 && elapsed < outputStart)) {
      return { status: "PROCESSING", output: "", steps: visibleSteps };
    }
    if (turn.fault === "failed") {
      return {
        status: "FAILED",
        output: "The workspace could not finish this query (simulated failure).",
        steps: visibleSteps,
      };
    }
    const cuts = outputCuts(output);
    const chunkDelay = delay / 2;
    const shown =
      chunkDelay === 0
        ? cuts.length
        : Math.min(cuts.length, Math.floor((elapsed - outputStart) / chunkDelay) + 1);
    const done = shown >= cuts.length;
    return {
      status: done ? "PROCESSED" : "PROCESSING",
      output: done ? output : output.slice(0, cuts[shown - 1]),
      steps: visibleSteps,
    };
  }
}

/** Where a growing output may be cut: after about every twelfth of its words, never inside one. */
function outputCuts(output: string): number[] {
  const spaces: number[] = [];
  for (const match of output.matchAll(/\s+/g)) spaces.push(match.index);
  const chunks = Math.min(12, spaces.length + 1);
  const cuts: number[] = [];
  for (let chunk = 1; chunk < chunks; chunk += 1) {
    const cut = spaces[Math.floor((chunk * spaces.length) / chunks)];
    if (cut !== undefined && cut > (cuts[cuts.length - 1] ?? 0)) cuts.push(cut);
  }
  cuts.push(output.length);
  return cuts;
}
