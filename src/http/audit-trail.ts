import { auditRecord } from "../audit/audit-record.js";
import type { AuditSink } from "../audit/sink.js";
import type { Clock } from "../util/clock.js";
import type { RequestSubscriber } from "./request-contexts.js";

/** What the audit trail is built from. */
export interface AuditTrailOptions {
  sink: AuditSink;
  /** `AUDIT_CONTENT=on`: the question and the answers' text go in each record. */
  content: boolean;
  clock: Clock;
  /** A record written, or dropped by a sink that could not keep up (metrics). */
  onRecord?: (outcome: "written" | "dropped") => void;
}

/**
 * The audit trail (docs/governance.md#the-audit-trail): a subscriber of each request's end, like the
 * log line, that writes one record per workspace answer (a request that planned queries). An
 * answer still running when its request closes (a background answer, a count finishing) is
 * recorded when it ends, with its tokens; requests refused before their answer, and the adapter's
 * own answers to chat UIs' housekeeping, have no record (the log line has them).
 */
export function auditTrail(options: AuditTrailOptions): RequestSubscriber {
  return ({ context, response, seconds }) => {
    const { facts } = context;
    if (!facts.queryIds) return;
    const { seen } = context;
    const closedAt = performance.now();
    // Its events still followed once its response has ended whole: an answer that outlives its request.
    const background = seen?.following === true && response.writableFinished;
    const write = () => {
      const record = auditRecord(
        {
          endedAt: options.clock.now(),
          requestId: context.id,
          account: facts.account,
          workspace: facts.workspace,
          mode: facts.mode,
          route: facts.route,
          queryIds: facts.queryIds ?? [],
          status: response.statusCode,
          background,
          durationMs: seconds * 1000 + (performance.now() - closedAt),
          seen,
        },
        options.content,
      );
      options.onRecord?.(options.sink.write(record) ? "written" : "dropped");
    };
    if (seen?.running) void seen.whenIdle().then(write);
    else write();
  };
}
