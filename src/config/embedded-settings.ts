import { z } from "zod";
import { documented, integer, listOf, optionalText } from "./variables.js";

/** The embedded section's variables: the local stand-in workspace `npm start` runs without `WORKSPACE_BASE_URL`. */
export const embeddedVariables = z.object({
  EMBEDDED_DOCUMENTS_DIR: documented(optionalText, "Folder of documents (Markdown, text, PDF; watched for changes) the embedded workspace answers from (`--documents`)", "this README and `docs/`"),
  EMBEDDED_STEP_DELAY_MS: documented(integer(120, 0, 60_000), "Pace of the embedded workspace: a step every so often, output chunks every half of it; `0` answers at once"),
  EMBEDDED_WORKSPACES: documented(z.string().default("demo"), "Comma-separated workspace ids the embedded workspace knows"),
});

/** The embedded section as the adapter reads it (`config.embedded`). */
export function embeddedSettings(env: z.output<typeof embeddedVariables>) {
  return {
    documentsDir: env.EMBEDDED_DOCUMENTS_DIR,
    stepDelayMs: env.EMBEDDED_STEP_DELAY_MS,
    workspaces: listOf(env.EMBEDDED_WORKSPACES),
  };
}

/** The embedded workspace's documents, pace and workspaces (`EMBEDDED_*`). */
export type EmbeddedSettings = ReturnType<typeof embeddedSettings>;
