import { z } from "zod";
import { answerSettings, answerVariables } from "./answer-settings.js";
import { authSettings, authVariables } from "./auth-settings.js";
import { continuitySettings, continuityVariables } from "./continuity-settings.js";
import { embeddedSettings, embeddedVariables } from "./embedded-settings.js";
import { governanceSettings, governanceVariables } from "./governance-settings.js";
import { limitSettings, limitVariables } from "./limit-settings.js";
import { logSettings, logVariables } from "./log-settings.js";
import { mcpSettings, mcpVariables } from "./mcp-settings.js";
import { metricsSettings, metricsVariables } from "./metrics-settings.js";
import { oauthSettings, oauthVariables } from "./oauth-settings.js";
import { redisSettings, redisVariables } from "./redis-settings.js";
import { serverSettings, serverVariables } from "./server-settings.js";
import { upstreamSettings, upstreamVariables } from "./upstream-settings.js";
import { type VariableDoc, variableDoc } from "./variables.js";

export type { AnswerSettings } from "./answer-settings.js";
export type { AuthSettings } from "./auth-settings.js";
export type { ContinuitySettings } from "./continuity-settings.js";
export type { EmbeddedSettings } from "./embedded-settings.js";
export type { AuditSink, GovernanceSettings } from "./governance-settings.js";
export type { KeyEntry } from "./key-lists.js";
export type { LimitKind, LimitSettings, LimitValues, RateLimitSettings } from "./limit-settings.js";
export { LIMIT_KINDS } from "./limit-settings.js";
export type { LogSettings } from "./log-settings.js";
export type { McpSettings } from "./mcp-settings.js";
export type { MetricsSettings } from "./metrics-settings.js";
export type { IdpSettings, OAuthSettings, SignInAllowList } from "./oauth-settings.js";
export type { RedisSettings } from "./redis-settings.js";
export type { ServerSettings } from "./server-settings.js";
export type { UpstreamSettings } from "./upstream-settings.js";
export type { VariableDoc } from "./variables.js";

/**
 * The sections of the configuration, in the order docs/configuration.md and `--help` show them:
 * each a zod object of its environment variables (type, default, meaning), in its own module.
 * Adding a variable is one entry in its section's variables and one field in its section's settings.
 */
const SECTIONS = [
  { title: "Server", variables: serverVariables },
  { title: "Upstream", variables: upstreamVariables },
  { title: "Credentials", variables: authVariables },
  { title: "Answers", variables: answerVariables },
  { title: "Limits", variables: limitVariables },
  { title: "Usage and audit", variables: governanceVariables },
  { title: "Redis", variables: redisVariables },
  { title: "Continuity", variables: continuityVariables },
  { title: "MCP", variables: mcpVariables },
  { title: "OAuth for MCP", variables: oauthVariables },
  { title: "Logs", variables: logVariables },
  { title: "Metrics", variables: metricsVariables },
  { title: "Embedded workspace", variables: embeddedVariables },
] as const;

/**
 * Every environment variable the adapter reads, once: the sections' variables together. The
 * `Config` type, the configuration table of docs/configuration.md and `--help` are all derived from
 * it; a bad value stops start-up with the variable's name.
 */
export const environmentSchema = z.object({
  ...serverVariables.shape,
  ...upstreamVariables.shape,
  ...authVariables.shape,
  ...answerVariables.shape,
  ...limitVariables.shape,
  ...governanceVariables.shape,
  ...redisVariables.shape,
  ...continuityVariables.shape,
  ...mcpVariables.shape,
  ...oauthVariables.shape,
  ...logVariables.shape,
  ...metricsVariables.shape,
  ...embeddedVariables.shape,
});

/** The environment after validation, before it is shaped into `Config`. */
export type Environment = z.output<typeof environmentSchema>;

/** The environment shaped as the adapter reads it, one section a consumer takes whole; rules across sections are passed in here. */
function toConfig(env: Environment, context: z.RefinementCtx) {
  const upstream = upstreamSettings(env, context);
  const auth = authSettings(env, context);
  const redis = redisSettings(env, context, upstream.pollIntervalMaxMs);
  return {
    server: serverSettings(env, upstream.baseUrl === undefined, context),
    upstream,
    auth,
    answers: answerSettings(env),
    limits: limitSettings(env),
    /** Usage counting and the audit trail (docs/governance.md). */
    governance: governanceSettings(env, auth.adminKeys.length, context),
    /** The Redis the replicas share, or undefined: everything stays in process. */
    redis,
    continuity: continuitySettings(env, env.REDIS_COMMAND_TIMEOUT_MS),
    mcp: mcpSettings(env),
    /** OAuth for `/oauth/mcp` (docs/mcp-oauth.md), or undefined when `MCP_OAUTH` is off. */
    oauth: oauthSettings(env, redis !== undefined, context),
    log: logSettings(env),
    /** Where `/metrics` is served and what its labels name (docs/observability.md#metrics). */
    metrics: metricsSettings(env, { apiPort: env.PORT, keyLists: [auth.clientKeys, auth.gatewayKeys, auth.adminKeys] }, context),
    embedded: embeddedSettings(env),
  };
}

/** The whole configuration schema: the environment in, the adapter's `Config` out. */
export const configSchema = environmentSchema.transform(toConfig);

/** The validated configuration the rest of the adapter is built from: one settings object per section. */
export type Config = z.output<typeof configSchema>;

/** Thrown when the environment holds a bad value; its message names every variable at fault. */
export class ConfigError extends Error {}

/** Reads and validates the configuration from an environment (process.env in production). */
export function loadConfig(environment: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(environment);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** The documentation of every variable by section, in schema order (docs/configuration.md's table and `--help`). */
export function variableDocs(): { title: string; variables: [name: string, doc: VariableDoc][] }[] {
  return SECTIONS.map(({ title, variables }) => ({
    title,
    variables: Object.entries(variables.shape).map(([name, schema]) => [name, variableDoc(schema as z.ZodType)]),
  }));
}
