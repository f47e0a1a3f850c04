import { z } from "zod";
import type { SseFrame } from "../../core/sse-frame.js";
import { heldReservationSchema } from "../../limits/rate-limits.js";
import { ExpiringLru } from "../expiring-lru.js";

/** The statuses a background response ends in. */
export const ENDED_STATUSES = ["completed", "failed", "cancelled", "incomplete"] as const;

/**
 * A background response as the store keeps it (docs/responses-api.md#background-mode): who may see
 * it, the workspace query it follows (the truth any replica can follow), its response object (the
 * one `queued`/`in_progress` object until it ends, then the final one), and what a replica needs to
 * take the answer over when the one that ran it is gone (the dialect's state: opaque here, parsed
 * by the runner that resumes it). Read back from Redis through this schema.
 */
export const backgroundRecordSchema = z.object({
  id: z.string(),
  /** Hash of the credential that created it. */
  principal: z.string(),
  workspace: z.string(),
  queryId: z.string(),
  /** The response object: `in_progress` while it runs, then `completed`, `failed`, `cancelled` or `incomplete`. */
  response: z.looseObject({ status: z.string() }),
  /** What the dialect needs to rebuild its encoder on another replica (`runner.resume` parses it). */
  resume: z.unknown(),
  /** The answer's reservation in its key's quotas, which a replica that takes it over settles (docs/rate-limits.md#reservations). */
  reservation: heldReservationSchema.optional(),
});
/** A background response as the store keeps it. */
export type BackgroundRecord = z.infer<typeof backgroundRecordSchema>;

/** A frame of a background answer's event log as read back: an event of its dialect's, named by its `type`, numbered. */
export const loggedFrameSchema = z.looseObject({ type: z.string(), sequence_number: z.int() });

/**
 * Where background responses and their event logs live: in process, or in Redis so that any replica
 * reads, follows and cancels what any other started. Every event is a frame of its dialect's
 * encoder (a Responses stream event, an MCP task's step) whose `sequence_number` is its index in the log. Once a response ended (its terminal frames
 * appended by `end`), nothing more is appended: `append` and `end` report whether they were.
 */
export interface BackgroundStore {
  create(record: BackgroundRecord, ttlSeconds: number): Promise<void>;
  get(id: string): Promise<BackgroundRecord | null>;
  /**
   * Appends frames unless the response ended, or another replica than `owner` holds its lease;
   * false then (cancelled elsewhere, or taken over after this replica seemed gone).
   */
  append(id: string, frames: SseFrame[], ttlSeconds: number, owner: string): Promise<boolean>;
  /**
   * Ends the response with its final object and terminal frames, unless it had ended; true when this
   * call ended it. A frame whose `sequence_number` is `UNNUMBERED` gets the next number of the log
   * (a replica that cancels an answer another one runs does not know how far the log went).
   */
  end(id: string, response: BackgroundRecord["response"], frames: SseFrame[], ttlSeconds: number): Promise<boolean>;
  /** How many frames the log holds (the next frame's `sequence_number`). */
  size(id: string): Promise<number>;
  /** Frames with a `sequence_number` above `after`, in order. */
  events(id: string, after: number): Promise<SseFrame[]>;
  /** Whether the response has ended (its terminal frame is in the log). */
  ended(id: string): Promise<boolean>;
  /** Takes (or renews) the right to run the answer for `ms`; false when another replica holds it, or the response is gone. */
  lease(id: string, owner: string, ms: number): Promise<boolean>;
  delete(id: string): Promise<boolean>;
}

/** The `sequence_number` of a frame the store numbers as it appends it (`BackgroundStore.end`). */
export const UNNUMBERED = -1;

/** The sequence number a frame carries. */
export const sequenceOf = (frame: SseFrame): number => (frame.data as { sequence_number: number }).sequence_number;

interface HeldResponse {
  record: BackgroundRecord;
  frames: SseFrame[];
  ended: boolean;
  lease?: { owner: string; until: number };
}

/**
 * The in-process store: bounded in entries (the oldest created of the principal holding the most go
 * first: one key cannot push out everyone's), each with its own expiry.
 */
export class MemoryBackgroundStore implements BackgroundStore {
  private readonly held: ExpiringLru<HeldResponse>;

  constructor(
    maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {
    this.held = new ExpiringLru({ maxEntries, now, ownerOf: (held) => held.record.principal });
  }

  async create(record: BackgroundRecord, ttlSeconds: number): Promise<void> {
    this.held.set(record.id, { record, frames: [], ended: false }, ttlSeconds);
  }

  async get(id: string): Promise<BackgroundRecord | null> {
    return this.held.get(id)?.record ?? null;
  }

  async append(id: string, frames: SseFrame[], ttlSeconds: number, owner: string): Promise<boolean> {
    const held = this.held.get(id);
    if (!held || held.ended || (held.lease && held.lease.owner !== owner && held.lease.until > this.now())) return false;
    held.frames.push(...frames);
    this.held.expire(id, ttlSeconds);
    return true;
  }

  async end(id: string, response: BackgroundRecord["response"], frames: SseFrame[], ttlSeconds: number): Promise<boolean> {
    const held = this.held.get(id);
    if (!held || held.ended) return false;
    for (const frame of frames) {
      const data = frame.data as { sequence_number: number };
      const sequence = data.sequence_number === UNNUMBERED ? held.frames.length : data.sequence_number;
      held.frames.push(sequence === data.sequence_number ? frame : { ...frame, data: { ...data, sequence_number: sequence } });
    }
    held.ended = true;
    held.record = { ...held.record, response };
    this.held.expire(id, ttlSeconds);
    return true;
  }

  async size(id: string): Promise<number> {
    return this.held.get(id)?.frames.length ?? 0;
  }

  async events(id: string, after: number): Promise<SseFrame[]> {
    return this.held.get(id)?.frames.slice(Math.max(0, after + 1)) ?? [];
  }

  async ended(id: string): Promise<boolean> {
    return this.held.get(id)?.ended ?? true;
  }

  async lease(id: string, owner: string, ms: number): Promise<boolean> {
    const held = this.held.get(id);
    if (!held) return false;
    const now = this.now();
    if (held.lease && held.lease.owner !== owner && held.lease.until > now) return false;
    held.lease = { owner, until: now + ms };
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.held.delete(id);
  }
}
