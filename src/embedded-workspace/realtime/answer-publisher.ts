import type { QueryView, StoredQuery, Turn } from "../query-store.js";
import type { CentrifugoEndpoint } from "./centrifugo-endpoint.js";

/** One turn being published. */
interface Publishing {
  query: StoredQuery;
  turn: Turn;
  channel: string;
  status: QueryView["status"] | null;
  stepsSent: number;
  /** The output published so far. */
  sent: string;
  /** Words of the text the list will show next, published evenly until it shows it. */
  goal: { words: string[]; published: number; setAt: number; length: number };
}

/** A turn still unfinished after this long (a stalled one) is no longer published. */
const MAX_PUBLISHING_MS = 15 * 60_000;

/** Whitespace and the word after it; trailing whitespace at the end. */
const WORDS = /\s*\S+|\s+$/g;

/**
 * Publishes each embedded query's answer on its channel as it is written
 * (docs/upstream-assumptions.md#realtime): `status` changes, each `step`, and the output word by
 * word as `delta`s, then the terminal `status`. The list derives a query's state from the time
 * since it started (query-store.ts), so the publisher reads the same views: the channel runs one
 * output chunk ahead of the list and spreads that chunk's words evenly over the time until the
 * list shows it, so that a channel subscriber sees every word first and a list reader sees the
 * same text a little later. One timer serves every query, and runs only while one is being written.
 */
export class AnswerPublisher {
  private readonly publishing = new Map<StoredQuery, Publishing>();
  private timer: NodeJS.Timeout | null = null;
  private readonly leadMs: number;
  private readonly tickMs: number;

  constructor(
    private readonly endpoint: CentrifugoEndpoint,
    private readonly view: (query: StoredQuery, at: number) => QueryView,
    private readonly now: () => number,
    /** The store's pace: output chunks come every half of it. */
    stepDelayMs: number,
  ) {
    this.leadMs = stepDelayMs / 2;
    this.tickMs = Math.max(5, Math.min(25, Math.round(this.leadMs / 12)));
  }

  /** Queries being published now. */
  get active(): number {
    return this.publishing.size;
  }

  /**
   * Starts publishing the query's newest turn on `channel` (replacing an older turn's publishing),
   * after what its create answer showed (`shown`): a subscriber starts from the create answer's
   * `since`, so a step or text that answer already held must not come again (composing an answer
   * can take longer than a step).
   */
  track(query: StoredQuery, channel: string, shown?: QueryView): void {
    const turn = query.turns[query.turns.length - 1];
    if (!turn || this.leadMs <= 0) return;
    const output = shown?.status === "FAILED" ? "" : (shown?.output ?? "");
    this.publishing.set(query, {
      query,
      turn,
      channel,
      status: shown?.status ?? null,
      stepsSent: shown?.steps.length ?? 0,
      sent: output,
      goal: { words: [], published: 0, setAt: this.now(), length: output.length },
    });
    this.timer ??= setInterval(() => this.tick(), this.tickMs).unref();
  }

  /** Stops publishing (the workspace is closing). */
  close(): void {
    this.publishing.clear();
    this.stop();
  }

  private tick(): void {
    const now = this.now();
    for (const entry of this.publishing.values()) {
      const replaced = entry.query.turns[entry.query.turns.length - 1] !== entry.turn;
      if (replaced || now - entry.turn.startedAt > MAX_PUBLISHING_MS || this.advance(entry, now)) {
        this.publishing.delete(entry.query);
      }
    }
    if (this.publishing.size === 0) this.stop();
  }

  /** Publishes what is due for one query; true once its turn has ended. */
  private advance(entry: Publishing, now: number): boolean {
    const current = this.view(entry.query, now);
    const terminal = current.status === "PROCESSED" || current.status === "FAILED";
    const ahead = terminal ? current : this.view(entry.query, now + this.leadMs);
    if (!terminal && current.status !== entry.status) {
      entry.status = current.status;
      this.endpoint.publish(entry.channel, { status: current.status });
    }
    for (; entry.stepsSent < ahead.steps.length; entry.stepsSent += 1) {
      this.endpoint.publish(entry.channel, { step: ahead.steps[entry.stepsSent] });
    }
    // A failed query's output is its failure text, not an answer: only its status is published.
    const target = ahead.status === "FAILED" ? "" : ahead.output;
    if (target.length > entry.goal.length && target.startsWith(entry.sent)) {
      entry.goal = { words: target.slice(entry.sent.length).match(WORDS) ?? [], published: 0, setAt: now, length: target.length };
    }
    const { goal } = entry;
    // Spread over the lead less one tick, so the last word is out before the list shows the chunk.
    const share = terminal ? 1 : Math.min(1, (now - goal.setAt) / Math.max(1, this.leadMs - this.tickMs));
    let due = Math.ceil(goal.words.length * share);
    // Never behind the list: what it shows now has been published.
    let length = entry.sent.length;
    for (let index = goal.published; index < due; index += 1) length += (goal.words[index] as string).length;
    for (; due < goal.words.length && length < current.output.length; due += 1) length += (goal.words[due] as string).length;
    for (; goal.published < due; goal.published += 1) {
      const word = goal.words[goal.published] as string;
      entry.sent += word;
      this.endpoint.publish(entry.channel, { delta: word });
    }
    if (!terminal) return false;
    this.endpoint.publish(entry.channel, { status: current.status });
    return true;
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
