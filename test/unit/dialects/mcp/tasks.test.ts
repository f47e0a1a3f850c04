import { CreateTaskResultV1Schema, GetTaskResultV1Schema } from "@modelcontextprotocol/ext-tasks/core/v1";
import { CreateTaskResultV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2";
import { describe, expect, it } from "vitest";
import { InternalError, QueryFailedError } from "../../../../src/errors/adapter-error.js";
import { TaskEncoder } from "../../../../src/dialects/mcp/task-encoder.js";
import { expired, type TaskResume, taskView } from "../../../../src/dialects/mcp/task-state.js";
import { taskWire } from "../../../../src/dialects/mcp/task-wire.js";

// A task's encoder and its wire in each revision (docs/mcp.md#long-answers-as-tasks), pure: fed
// recorded events, read back as a replica that did not run it reads the record and the log.

const head: TaskResume = { mode: "reason", prompt: "Q", workspace: "acme", cardWorkspace: null, createdAt: "2026-11-26T10:00:00.000Z", ttlMs: 60_000, pollIntervalMs: 2000 };
const links = () => ({ url: "urn:x", clickable: false });
const at = Date.parse("2026-11-26T10:00:05.000Z");
const ID = `task_${"a".repeat(48)}`;

function ran(): { encoder: TaskEncoder; frames: any[] } {
  const encoder = new TaskEncoder(head, links, () => at);
  const frames = [...encoder.open()];
  frames.push(...encoder.encode({ type: "reasoning", choice: 0, text: "Searching", steps: ["Searching"] }));
  frames.push(...encoder.encode({ type: "text", choice: 0, text: "The answer." }));
  frames.push(...encoder.encode({ type: "reasoning", choice: 0, text: "\n\nComparing", steps: ["Comparing"] }));
  return { encoder, frames };
}

describe("a task's encoder", () => {
  it("logs each step with its time, the latest step being the working task's statusMessage", () => {
    const { encoder, frames } = ran();
    expect(frames.map((frame) => frame.data.type)).toEqual(["task.working", "task.step", "task.step"]);
    expect(frames.map((frame) => frame.data.sequence_number)).toEqual([0, 1, 2]);
    const view = taskView(ID, encoder.current(null), frames);
    expect(view).toMatchObject({ status: "working", statusMessage: "Comparing", lastUpdatedAt: "2026-11-26T10:00:05.000Z" });
    GetTaskResultV1Schema.parse(taskWire.task2025(view!));
    GetTaskResultV2Schema.parse(taskWire.detailed2026(view!));
    CreateTaskResultV1Schema.parse(taskWire.created2025(view!));
    CreateTaskResultV2Schema.parse(taskWire.created2026(view!));
  });

  it("resumed from the log, numbers on after it and reports the reasoning sent, not the text (gathered again)", () => {
    const { frames } = ran();
    const resumed = TaskEncoder.resumed(head, links, () => at, frames);
    expect(resumed.sent()).toEqual([{ content: "", reasoning: "Searching\n\nComparing" }]);
    expect(resumed.encode({ type: "reasoning", choice: 0, text: "\n\nWriting", steps: ["Writing"] })[0]?.data).toMatchObject({ sequence_number: 3 });
  });

  it("completed: the tool result stored whole; 2025 gives it with related-task, 2026 inline, stamped complete", () => {
    const { encoder, frames } = ran();
    encoder.encode({ type: "cited", choice: 0, citations: [], sources: [] } as any);
    encoder.encode({ type: "finished", choice: 0, queryId: "q-1" } as any);
    frames.push(...encoder.close(undefined));
    const view = taskView(ID, encoder.finished, [])!;
    expect(view.status).toBe("completed");
    expect(view.result?.structuredContent).toMatchObject({ answer: "The answer.", query_id: "q-1", steps: ["Searching", "Comparing"] });
    expect(taskWire.result2025(view)._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId: ID } });
    const detailed = GetTaskResultV2Schema.parse(taskWire.detailed2026(view)) as any;
    expect(detailed.result.resultType).toBe("complete");
    expect(detailed.result._meta).toBeUndefined();
  });

  it("a failed query: 2025 failed with the error text; 2026 completed with the tool error", () => {
    const { encoder } = ran();
    const view = taskView(ID, encoder.current({ status: "failed", error: new QueryFailedError("The workspace query failed"), at }), [])!;
    expect(taskWire.task2025(view)).toMatchObject({ status: "failed", statusMessage: "The workspace query failed" });
    expect(taskWire.result2025(view)).toMatchObject({ isError: true, content: [{ type: "text", text: "The workspace query failed" }] });
    expect(GetTaskResultV2Schema.parse(taskWire.detailed2026(view))).toMatchObject({ status: "completed", result: { isError: true } });
  });

  it("a takeover refused (no tool result): 2026 failed with a JSON-RPC error", () => {
    const { encoder } = ran();
    const refused = { ...encoder.current(null), status: "failed", error: { code: "server_error", message: new InternalError("x").message } };
    expect(GetTaskResultV2Schema.parse(taskWire.detailed2026(taskView(ID, refused, [])!))).toMatchObject({ status: "failed", error: { code: -32603 } });
  });

  it("a record that does not parse is no task; a task past its TTL is gone", () => {
    expect(taskView(ID, { status: "in_progress" }, [])).toBeNull();
    expect(expired(head, Date.parse(head.createdAt) + head.ttlMs - 1)).toBe(false);
    expect(expired(head, Date.parse(head.createdAt) + head.ttlMs)).toBe(true);
  });
});
