import pino, { type Logger } from "pino";
import pretty from "pino-pretty";

/**
 * The adapter's logger: JSON lines for machines, or pino-pretty's coloured lines for a person at
 * a terminal (`auto`: pretty when stdout is a TTY). Credentials never reach it (the request log
 * names fields explicitly); the redaction below is a second guard for fields that might.
 */
export function createLogger(options: { level: string; format: "json" | "pretty" | "auto" }): Logger {
  const settings = {
    level: options.level,
    base: { service: "workspace-openai-adapter" },
    redact: { paths: ["authorization", "*.authorization", "headers.authorization", "credential", "*.credential"], censor: "[redacted]" },
  };
  const usePretty = options.format === "pretty" || (options.format === "auto" && process.stdout.isTTY === true);
  if (!usePretty) return pino(settings);
  return pino(settings, pretty({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,service", singleLine: true }));
}
