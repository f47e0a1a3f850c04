import type { Mode } from "../core/modes.js";
import { RequestValidationError } from "../errors/adapter-error.js";
import { withInstructions } from "../structured/instruction-block.js";
import type { StructuredRequest } from "../structured/structured-request.js";

/** One upstream query to run for one choice. */
export interface PlannedQuery {
  index: number;
  queryId: string;
  /** The `POST /queries` body (docs/upstream-assumptions.md#create). */
  createBody: Record<string, unknown> & { id: string };
}

/** What a request asks of the upstream: the prompt, the mode and one query per choice. */
export interface QueryPlan {
  prompt: string;
  /** Whether choice 0 continues an existing query (a further turn of its thread). */
  continued: boolean;
  mode: Mode;
  queries: PlannedQuery[];
}

/** A dialect's request, as planning needs it: each dialect turns its own request into this. */
export interface PlanInput {
  prompt: string;
  mode: Mode;
  /** How many answers: one query each. */
  choices: number;
  /** An existing query to continue (a later turn of its thread); only with one choice. */
  continueQueryId?: string | null | undefined;
  /** Extra fields for the create body (the request's escape hatch), merged in. */
  createFields?: Record<string, unknown> | null | undefined;
  /** JSON asked for instead of prose: the content then carries the instruction block (docs/structured-answers.md). */
  structured?: StructuredRequest | null | undefined;
  /** Where, in the dialect's request, `choices` and `createFields` came from: the `loc` of a 422. */
  from?: { choices: (string | number)[]; createFields: (string | number)[] };
}

/** The settings and effects planning needs. */
export interface PlanOptions {
  modeField: string;
  newQueryId: () => string;
  /**
   * The create fields a client may add, when not all may (docs/governance.md#whose-query-it-is): a
   * shared upstream credential passes only those the deployment lists (`SHARED_KEY_QUERY_FIELDS`).
   */
  allowedCreateFields?: ReadonlySet<string> | undefined;
}

/**
 * Plans the upstream queries of a request: the prompt is the content, the mode goes in the mode
 * field, and each choice is its own query with an id the adapter chooses
 * (docs/upstream-assumptions.md#query-ids-and-lost-creates), or the query a conversation
 * continues. Extra create fields are merged in; the keys the adapter sets itself are refused
 * rather than silently overwritten, and so is any field outside `allowedCreateFields` when it is
 * given (a shared credential: a field could reach beyond the caller's own queries). A structured answer's question carries the instruction block
 * (docs/structured-answers.md#what-is-sent-to-the-workspace): that is the content, and the prompt.
 */
export function planQueries(input: PlanInput, options: PlanOptions): QueryPlan {
  const from = input.from ?? { choices: ["body", "n"], createFields: ["body", "query"] };
  if (input.continueQueryId && input.choices > 1) {
    throw new RequestValidationError([
      { loc: from.choices, msg: "A continued query answers one choice; n must be 1", type: "value_error", input: input.choices },
    ]);
  }
  const extra = input.createFields ?? {};
  const reserved = ["content", "id", options.modeField].filter((key) => Object.hasOwn(extra, key));
  if (reserved.length > 0) {
    throw new RequestValidationError(
      reserved.map((key) => ({
        loc: [...from.createFields, key],
        msg: `'${key}' is set by the adapter from ${key === "content" ? "the prompt" : key === "id" ? "the conversation" : "'model'"}; remove it from '${String(from.createFields.at(-1))}'`,
        type: "value_error",
        input: extra[key],
      })),
    );
  }
  refuseUnlisted(extra, options.allowedCreateFields, from);
  const prompt = input.structured ? withInstructions(input.prompt, input.structured) : input.prompt;
  const queries = Array.from({ length: input.choices }, (_, index) => {
    const queryId = (index === 0 && input.continueQueryId) || options.newQueryId();
    return { index, queryId, createBody: { ...extra, content: prompt, id: queryId, [options.modeField]: input.mode } };
  });
  return { prompt, continued: Boolean(input.continueQueryId), mode: input.mode, queries };
}

/** Refuses every create field not in `allowed` (when given), naming each (docs/governance.md#whose-query-it-is). */
function refuseUnlisted(extra: Record<string, unknown>, allowed: ReadonlySet<string> | undefined, from: NonNullable<PlanInput["from"]>): void {
  if (allowed === undefined) return;
  const refused = Object.keys(extra).filter((key) => !allowed.has(key));
  if (refused.length === 0) return;
  const listed = allowed.size === 0 ? "none" : [...allowed].map((key) => `'${key}'`).join(", ");
  throw new RequestValidationError(
    refused.map((key) => ({
      loc: [...from.createFields, key],
      msg: `'${key}' is not accepted here: this deployment shares one workspace credential among its callers and passes only these create fields: ${listed}`,
      type: "extra_forbidden",
      input: extra[key],
    })),
  );
}
