import type { Logger } from "pino";
import type { TokenUsage } from "../answer/answer-events.js";
import type { Account } from "../auth/account.js";
import type { Clock } from "../util/clock.js";
import { errorMessage } from "../util/error-message.js";
import { type RetryOutcome, retryBriefly } from "../util/retry-briefly.js";
import { utcDayOf } from "../util/utc-calendar.js";
import type { UsageCharge, UsageStore, UsageTotal } from "./usage-store.js";

/** Waits before the retries of a usage write: past a moment's outage or a failover. */
const RETRY_DELAYS_MS: readonly number[] = [250, 1000, 3000];

/** What the ledger reports, for metrics. */
export interface UsageEvents {
  /** An answer's usage was charged, under its account's label (a bounded set: docs/governance.md#metrics). */
  onCharged?: (label: string, charge: UsageCharge) => void;
  /** How an answer's usage write went. */
  onWritten?: (outcome: RetryOutcome) => void;
}

/** What the ledger is built from. */
export interface UsageLedgerOptions {
  store: UsageStore;
  clock: Clock;
  /** Each charge's id (`Ids.charge`): its retries carry the same one, so the store applies it once. */
  newId: () => string;
  logger: Logger;
  events?: UsageEvents;
  /** Resolves when the shared store answers again after an outage: a failed write's cue to retry at once. */
  wake?: (() => Promise<void>) | undefined;
}

/**
 * Usage per account, workspace, mode and UTC day (docs/governance.md#usage), as answers are
 * charged: the one charge of each answer (the runner's meter) adds it to the day's totals, written
 * in the background and retried briefly when the store does not answer (a write lost after that is
 * counted and logged, never a failed answer). A charge has an id its retries share: a write that
 * timed out but went through is not counted again.
 */
export class UsageLedger {
  private readonly writes = new Set<Promise<unknown>>();

  constructor(private readonly options: UsageLedgerOptions) {}

  /** Adds one answer's usage to the totals of the day it ends on. */
  charge(account: Account, workspace: string, mode: string, usage: TokenUsage): void {
    const { clock, store, events, logger } = this.options;
    const charge: UsageCharge = {
      id: this.options.newId(),
      day: utcDayOf(clock.now()).name,
      account: account.id,
      workspace,
      mode,
      inputTokens: Math.round(usage.promptTokens),
      outputTokens: Math.round(usage.completionTokens),
      reasoningTokens: Math.round(usage.reasoningTokens),
    };
    events?.onCharged?.(account.label, charge);
    const attempt = retryBriefly(() => store.add(charge), RETRY_DELAYS_MS, clock, this.options.wake);
    const write = attempt.outcome.then(({ outcome, lastError }) => {
      events?.onWritten?.(outcome);
      if (outcome !== "lost") return;
      const err = { message: lastError === undefined ? undefined : errorMessage(lastError) };
      logger.warn({ account: account.id, workspace, mode, day: charge.day, err }, "an answer's usage was not recorded");
    });
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  /** The totals of each of `days`; rejects when the store cannot answer. */
  totals(days: readonly string[]): Promise<UsageTotal[]> {
    return this.options.store.totals(days);
  }

  /** Waits for the writes under way (their retries included). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }
}
