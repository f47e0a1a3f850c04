import type { Logger } from "pino";
import { type ChatUiTask, taskName } from "../chat-ui-tasks/chat-ui-task.js";
import { recognizeChatUiTask } from "../chat-ui-tasks/recognize-task.js";
import type { Config } from "../config/config.js";
import type { PlainMessage } from "../core/plain-message.js";

/** Who handled a recognised housekeeping request: the adapter, or the workspace as a question. */
export type TaskHandling = "local" | "workspace";

/** What the housekeeping step is built from. */
export interface HousekeepingOptions {
  mode: Config["answers"]["chatUiTasks"];
  logger: Logger;
  /** Told of every recognised request and who handles it (metrics). */
  onTask?: (task: ChatUiTask, handled: TaskHandling) => void;
}

/**
 * The edge of the dialects for chat UIs' housekeeping (docs/chat-ui-tasks.md): before planning, a
 * request is looked at for a UI's housekeeping frame; one the adapter answers itself never becomes
 * a workspace query nor a turn of any thread. `CHAT_UI_TASKS=workspace` passes them on as
 * questions; so is one that forces a tool call, which a text reply cannot answer (it is then
 * refused as any forced tool call is, or ignored with `LENIENT_PARAMETERS=on`).
 */
export class ChatUiHousekeeping {
  constructor(private readonly options: HousekeepingOptions) {}

  /** The task the adapter answers itself, or null (the request goes on to the workspace). */
  localTask(messages: readonly PlainMessage[], forcesToolCall: boolean): ChatUiTask | null {
    const task = recognizeChatUiTask(messages);
    if (!task) return null;
    const handled: TaskHandling = this.options.mode === "local" && !forcesToolCall ? "local" : "workspace";
    this.options.onTask?.(task, handled);
    this.options.logger.debug({ chatUiTask: taskName(task), handled, turnsQuoted: task.conversation.length }, "chat UI housekeeping request");
    return handled === "local" ? task : null;
  }
}
