import { z } from "zod";
import { ID_PATTERN } from "../core/ids.js";
import { type Mode, MODES } from "../core/modes.js";
import { documented, integer, optionalInteger } from "./variables.js";

/** The limits one workspace can have (docs/rate-limits.md): the per-minute ones and the quotas per UTC day and month. */
export const LIMIT_KINDS = ["rpm", "concurrent", "tpm", "tpd", "tpmo"] as const;
/** A kind of limit: requests per minute, answers in flight, tokens per minute, per UTC day, per UTC month. */
export type LimitKind = (typeof LIMIT_KINDS)[number];
/** A workspace's limits: a number, or null for "no limit" (an override's `off`). */
export type LimitValues = Partial<Record<LimitKind, number | null>>;

/**
 * `RATE_LIMIT_OVERRIDES`: `<workspace>=<kind>:<value>,…` entries separated by `;`, where a value is
 * a whole number from 1, or `off`. A malformed entry stops start-up naming the entry and what is wrong.
 */
const rateLimitOverrides = z
  .string()
  .default("")
  .transform((text, context) => {
    const overrides: Record<string, LimitValues> = {};
    const problem = (entry: string, message: string) => context.addIssue({ code: "custom", message: `'${entry}': ${message}` });
    for (const entry of text.split(";").map((part) => part.trim()).filter(Boolean)) {
      const equals = entry.indexOf("=");
      const workspace = entry.slice(0, Math.max(equals, 0)).trim();
      if (equals < 0 || !ID_PATTERN.test(workspace)) {
        problem(entry, "expected <workspace>=<kind>:<value>,… with a workspace id before `=` (e.g. acme=rpm:600,concurrent:20)");
        continue;
      }
      if (Object.hasOwn(overrides, workspace)) {
        problem(entry, `workspace '${workspace}' is named twice`);
        continue;
      }
      const values: LimitValues = {};
      for (const setting of entry.slice(equals + 1).split(",").map((part) => part.trim())) {
        const [kind = "", value = "", ...rest] = setting.split(":").map((part) => part.trim());
        if (!(LIMIT_KINDS as readonly string[]).includes(kind) || rest.length > 0) {
          problem(entry, `'${setting}' is not <kind>:<value> with a kind of ${LIMIT_KINDS.join(", ")}`);
        } else if (Object.hasOwn(values, kind)) {
          problem(entry, `'${kind}' is set twice`);
        } else if (value === "off") {
          values[kind as LimitKind] = null;
        } else if (/^[1-9][0-9]{0,14}$/.test(value)) {
          values[kind as LimitKind] = Number(value);
        } else {
          problem(entry, `'${setting}': the value must be a whole number from 1, or off`);
        }
      }
      overrides[workspace] = values;
    }
    return overrides;
  });

/** What an answer of each mode is expected to produce before it is known (docs/rate-limits.md#reservations). */
const DEFAULT_ANSWER_TOKENS: Record<Mode, number> = { ask: 500, reason: 1500, build: 3000 };

/**
 * `RATE_LIMIT_ANSWER_TOKENS`: `<mode>:<tokens>,…`; a mode not named keeps its default. A malformed
 * entry stops start-up naming it.
 */
const answerTokens = z
  .string()
  .default("")
  .transform((text, context) => {
    const tokens = { ...DEFAULT_ANSWER_TOKENS };
    const named = new Set<string>();
    for (const entry of text.split(",").map((part) => part.trim()).filter(Boolean)) {
      const [mode = "", value = "", ...rest] = entry.split(":").map((part) => part.trim());
      if (!(MODES as readonly string[]).includes(mode) || rest.length > 0 || !/^[1-9][0-9]{0,8}$/.test(value)) {
        context.addIssue({ code: "custom", message: `'${entry}': expected <mode>:<tokens> with a mode of ${MODES.join(", ")} and a whole number of tokens from 1` });
      } else if (named.has(mode)) {
        context.addIssue({ code: "custom", message: `'${entry}': '${mode}' is set twice` });
      } else {
        named.add(mode);
        tokens[mode as Mode] = Number(value);
      }
    }
    return tokens;
  });

/** The limits section's variables: how large a request may be, how many run at once, and each key's rate limits. */
export const limitVariables = z.object({
  BODY_LIMIT_BYTES: documented(integer(1024 * 1024, 1024), "Largest request body (413 beyond)"),
  MAX_MESSAGES: documented(integer(1000, 1), "Most messages accepted in one request"),
  MAX_JSON_DEPTH: documented(integer(32, 4, 1000), "Deepest JSON nesting accepted in a request body"),
  MAX_CHOICES: documented(integer(8, 1, 128), "Largest `n` accepted"),
  MAX_CONCURRENT_REQUESTS: documented(integer(4000, 1), "Requests in flight before new ones get a fast 429"),
  MAX_CONCURRENT_PER_WORKSPACE: documented(integer(2000, 1), "The same, per workspace"),
  RATE_LIMIT_RPM: documented(optionalInteger(1), "Requests per minute per client key and workspace; beyond it a 429 with `retry-after` (shared between replicas with `REDIS_URL`)", "unset (no limit)"),
  RATE_LIMIT_CONCURRENT: documented(optionalInteger(1), "Answers in flight per client key and workspace; beyond it a 429", "unset (no limit)"),
  RATE_LIMIT_TPM: documented(
    optionalInteger(1),
    "Tokens per minute per client key and workspace (prompt and completion, as usage counts them): each answer's expected tokens are reserved at admission and settled to its count when it ends; a request whose reservation does not fit is refused",
    "unset (no limit)",
  ),
  RATE_LIMIT_TPD: documented(
    optionalInteger(1),
    "Tokens per UTC day per client key (or gateway identity) and workspace, reserved and settled like `RATE_LIMIT_TPM`, so that concurrent and abandoned answers cannot pass it; a request that does not fit is a 429 until the day ends (shared between replicas with Redis)",
    "unset (no quota)",
  ),
  RATE_LIMIT_TPMO: documented(
    optionalInteger(1),
    "Tokens per UTC calendar month per client key (or gateway identity) and workspace, reserved and settled like `RATE_LIMIT_TPD`; a request that does not fit is a 429 until the month ends",
    "unset (no quota)",
  ),
  RATE_LIMIT_OVERRIDES: documented(
    rateLimitOverrides,
    "Per-workspace limits, `;`-separated: `acme=rpm:600,concurrent:20;lab=tpm:off,tpd:2000000` (`rpm`, `concurrent`, `tpm`, `tpd`, `tpmo`: a number, or `off` for none); kinds not named keep the defaults above",
    "unset",
  ),
  RATE_LIMIT_ANSWER_TOKENS: documented(
    answerTokens,
    "Tokens an answer of each mode is expected to produce, `ask:500,reason:1500,build:3000` (a mode not named keeps its default): under a token limit, admission reserves the prompt and this before the answer runs, so that concurrent requests cannot together pass a quota; an answer whose client leaves is charged at least this",
    "ask:500,reason:1500,build:3000",
  ),
  RATE_LIMIT_SLOT_TTL_MS: documented(
    integer(30_000, 1000),
    "Lifetime of a concurrency slot unless renewed: an answer renews its slot while it runs, so a replica that dies frees its slots within this time",
  ),
});

/** The limits section's variables as validated. */
export type LimitVariables = z.output<typeof limitVariables>;

/** The limits of every workspace: the defaults, and each override resolved over them. */
export interface RateLimitSettings {
  /** What a workspace without an override gets. */
  defaults: LimitValues;
  /** Workspaces with an override: their limits with the defaults filled in. */
  workspaces: Record<string, LimitValues>;
  /** How long a concurrency slot lives unless renewed. */
  slotTtlMs: number;
  /** What an answer of each mode is expected to produce (`RATE_LIMIT_ANSWER_TOKENS`): reserved with its prompt under a token limit. */
  answerTokens: Record<Mode, number>;
}

function rateLimitSettings(env: LimitVariables): RateLimitSettings | undefined {
  const defaults: LimitValues = {
    rpm: env.RATE_LIMIT_RPM ?? null,
    concurrent: env.RATE_LIMIT_CONCURRENT ?? null,
    tpm: env.RATE_LIMIT_TPM ?? null,
    tpd: env.RATE_LIMIT_TPD ?? null,
    tpmo: env.RATE_LIMIT_TPMO ?? null,
  };
  const workspaces = Object.fromEntries(
    Object.entries(env.RATE_LIMIT_OVERRIDES).map(([workspace, values]) => [workspace, { ...defaults, ...values }]),
  );
  const limited = (values: LimitValues) => LIMIT_KINDS.some((kind) => typeof values[kind] === "number");
  if (!limited(defaults) && !Object.values(workspaces).some(limited)) return undefined;
  return { defaults, workspaces, slotTtlMs: env.RATE_LIMIT_SLOT_TTL_MS, answerTokens: env.RATE_LIMIT_ANSWER_TOKENS };
}

/** The limits section as the adapter reads it (`config.limits`). */
export function limitSettings(env: LimitVariables) {
  return {
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    maxMessages: env.MAX_MESSAGES,
    maxJsonDepth: env.MAX_JSON_DEPTH,
    maxChoices: env.MAX_CHOICES,
    maxConcurrentRequests: env.MAX_CONCURRENT_REQUESTS,
    maxConcurrentPerWorkspace: env.MAX_CONCURRENT_PER_WORKSPACE,
    /** Limits per client key and workspace; undefined when none is set anywhere (admission then costs nothing). */
    rate: rateLimitSettings(env),
    /** What an answer of each mode is expected to produce (`RATE_LIMIT_ANSWER_TOKENS`): what an answer whose client left is charged at least. */
    answerTokens: env.RATE_LIMIT_ANSWER_TOKENS,
  };
}

/** What a request may be (body, messages, nesting, choices), how many run at once, and the rate limits (`MAX_*`, `BODY_LIMIT_BYTES`, `RATE_LIMIT_*`). */
export type LimitSettings = ReturnType<typeof limitSettings>;
