import { z } from "zod";
import { documented } from "./variables.js";

/** The log section's variables. */
export const logVariables = z.object({
  LOG_LEVEL: documented(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"), "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`"),
  LOG_FORMAT: documented(z.enum(["auto", "json", "pretty"]).default("auto"), "`json`, `pretty`, or `auto` (pretty at a terminal, JSON otherwise)"),
});

/** The log section as the adapter reads it (`config.log`, what `createLogger` takes). */
export function logSettings(env: z.output<typeof logVariables>) {
  return { level: env.LOG_LEVEL, format: env.LOG_FORMAT };
}

/** The log lines' level and format (`LOG_LEVEL`, `LOG_FORMAT`). */
export type LogSettings = ReturnType<typeof logSettings>;
