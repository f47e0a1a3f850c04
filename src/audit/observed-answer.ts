import type { ChoiceSent, TokenUsage } from "../answer/answer-events.js";
import type { RunningAnswer } from "../answer/running-answer.js";

/** What the audit trail learns of one answer as it runs (docs/governance.md#the-audit-trail). */
export interface AnswerSeen {
  /** The question asked (the plan's prompt). */
  readonly prompt: string;
  /** Sources cited or found, over every choice (the `cited` events). */
  readonly sources: number;
  /** What each choice sent, once the delivery counted its usage. */
  readonly sent: readonly ChoiceSent[] | undefined;
  /** The answer's usage, once counted. */
  readonly usage: TokenUsage | undefined;
  /** Whether the answer's events are still being followed. */
  readonly following: boolean;
  /** Whether the answer is still being followed, or its usage counted. */
  readonly running: boolean;
  /** Resolves once nothing runs any more (at once when nothing does). */
  whenIdle(): Promise<void>;
}

/**
 * Follows an answer for the audit trail without changing it: the same events and usage, and what
 * they say on the side (the sources, what was sent, the tokens), and whether it still runs — which
 * it may after its request closed (a background answer, a count finishing after the last frame).
 */
export function observeAnswer(answer: RunningAnswer, prompt: string): { answer: RunningAnswer; seen: AnswerSeen } {
  let following = 0;
  let counting = 0;
  let sources = 0;
  let sent: readonly ChoiceSent[] | undefined;
  let usage: TokenUsage | undefined;
  let waiting: (() => void)[] = [];
  // Looked at once the turn is over: a delivery asks for the usage right after the last event, and
  // the answer has not ended in between.
  const idle = () =>
    setImmediate(() => {
      if (following > 0 || counting > 0) return;
      const resolve = waiting;
      waiting = [];
      for (const done of resolve) done();
    });
  const seen: AnswerSeen = {
    prompt,
    get sources() {
      return sources;
    },
    get sent() {
      return sent;
    },
    get usage() {
      return usage;
    },
    get following() {
      return following > 0;
    },
    get running() {
      return following > 0 || counting > 0;
    },
    whenIdle: () => (seen.running ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve()),
  };
  const observed: RunningAnswer = {
    ...answer,
    async *events(streamed) {
      following += 1;
      try {
        for await (const event of answer.events(streamed)) {
          if (event.type === "cited") sources += event.sources.length;
          yield event;
        }
      } finally {
        following -= 1;
        idle();
      }
    },
    usage(choices) {
      sent = choices;
      counting += 1;
      const counted = answer.usage(choices).then((value) => {
        usage = value;
        return value;
      });
      void counted.then(
        () => undefined,
        () => undefined,
      ).finally(() => {
        counting -= 1;
        idle();
      });
      return counted;
    },
  };
  return { answer: observed, seen };
}
