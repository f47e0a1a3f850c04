import type { AnswerEvent, ChoiceSent, TokenUsage } from "../answer/answer-events.js";
import type { Following, RunningAnswer } from "../answer/running-answer.js";
import type { AnswerRun, BeforeAnswerEnds } from "./delivery/delivery.js";

/** What `metered` charges an answer's usage to, besides its meter. */
export interface Charges {
  remember?: BeforeAnswerEnds | undefined;
  /** The usage ledger, under who asked, where and in which mode (docs/governance.md#usage); undefined when usage is not counted. */
  account?: ((usage: TokenUsage) => void) | undefined;
  /**
   * What an answer of its mode is expected to produce per choice (`RATE_LIMIT_ANSWER_TOKENS`): the
   * least an answer that ends early is charged for its completion, since its query runs on upstream.
   */
  expected?: number | undefined;
  /** The answer whose usage an answer that ended early is counted over (the one the audit trail does not follow: it records only what was delivered). */
  counted?: RunningAnswer | undefined;
}

/**
 * The run of an answer whose usage is counted once and charged once: the one charge point of every
 * answer, to the key's token limits (the meter) and the usage ledger. Its usage is charged when a
 * delivery counts it, or else when the answer ends (`ended`): an answer that ended before its
 * usage was counted — the client left, it failed or timed out, a shutdown — is charged its prompt
 * and what it produced, at least the expected answer per choice unless its queries had finished
 * (the interface has no cancel: a query whose client left runs on, and following it to its end
 * would cost a poll per abandoned answer for as long as the mode's deadline).
 */
export function metered(answer: RunningAnswer, parts: Omit<AnswerRun, "answer" | "usage" | "remember" | "ended"> & Charges): AnswerRun {
  let counted: Promise<TokenUsage> | undefined;
  const { account, expected, counted: countedOver = answer, ...run } = parts;
  const charge = (usage: TokenUsage) => {
    parts.meter.charge(usage);
    account?.(usage);
    return usage;
  };
  const kept = (parts.meter.countsTokens || account !== undefined) && expected !== undefined ? keptAnswer(answer) : undefined;
  return {
    answer: kept?.answer ?? answer,
    remember: undefined,
    ...run,
    usage(sent) {
      counted ??= answer.usage(sent).then(charge);
      return counted;
    },
    ended() {
      if (counted || !kept || expected === undefined) return;
      counted = producedUsage(countedOver, kept, expected).then(charge);
      counted.catch(() => undefined);
    },
  };
}

/** An answer's text and steps as they went by, per choice, and how many choices finished. */
interface Kept {
  answer: RunningAnswer;
  sent: ChoiceSent[];
  finished: number;
}

/** The answer with what it produced kept on the side as its events go by (the deliveries read the same events). */
function keptAnswer(answer: RunningAnswer): Kept {
  const kept: Kept = { answer, sent: answer.queryIds.map(() => ({ content: "", reasoning: "" })), finished: 0 };
  async function* events(following: Following): AsyncGenerator<AnswerEvent> {
    for await (const event of answer.events(following)) {
      const choice = kept.sent[(event as { choice?: number }).choice ?? -1];
      if (event.type === "text" && choice) choice.content += event.text;
      else if (event.type === "reasoning" && choice) choice.reasoning += event.text;
      else if (event.type === "finished") kept.finished += 1;
      yield event;
    }
  }
  kept.answer = { queryIds: answer.queryIds, trace: answer.trace, events, usage: (sent) => answer.usage(sent) };
  return kept;
}

/** The usage of an answer that ended before a delivery counted it: what it produced, and at least `expected` per choice of one whose queries had not all finished. */
async function producedUsage(answer: RunningAnswer, kept: Kept, expected: number): Promise<TokenUsage> {
  const usage = await answer.usage(kept.sent);
  if (kept.finished >= kept.sent.length) return usage;
  return { ...usage, completionTokens: Math.max(usage.completionTokens, expected * kept.sent.length) };
}
