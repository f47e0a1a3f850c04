import { isTerminal, type QuerySnapshot, type QueryStatus } from "../../core/query-snapshot.js";
import { readPublication } from "./read-publication.js";

/** What one publication did: nothing, a repeat, a hole in the stream, progress, or a terminal status. */
export type PublicationEffect = "ignored" | "duplicate" | "gap" | "progress" | "terminal";

/**
 * One query's answer as its realtime channel tells it, and the merge of that with what the list
 * shows (docs/upstream-assumptions.md#realtime). Pure: no I/O, no clock. The list is the source of
 * truth: a terminal list snapshot is taken whole, and the channel's text is used only while one of
 * the two extends the other; the first disagreement sets the channel aside for good.
 */
export class ChannelView {
  private output: string;
  private steps: readonly unknown[];
  private status: QueryStatus | null = null;
  private offset: number;
  private disagreed = false;

  /** `initial` is the create answer; `since` the stream position it named. */
  constructor(initial: QuerySnapshot, since: number) {
    this.output = initial.output;
    this.steps = initial.steps;
    this.offset = since;
  }

  /** The output as the channel alone has told it so far (`check` compares it with the list's). */
  get channelOutput(): string {
    return this.output;
  }

  /** Whether the channel and the list have disagreed on the output (the channel is then ignored). */
  get diverged(): boolean {
    return this.disagreed;
  }

  /**
   * Applies one publication. Offsets (when the endpoint gives them) must follow one another: a
   * repeat (after a recovery) is dropped, and a hole means text was missed.
   */
  apply(data: unknown, offset: number | undefined): PublicationEffect {
    if (offset !== undefined) {
      if (offset <= this.offset) return "duplicate";
      if (offset > this.offset + 1) return "gap";
      this.offset = offset;
    }
    const publication = readPublication(data);
    if (!publication) return "ignored";
    let progress = false;
    if (publication.output !== undefined) {
      progress = publication.output !== this.output;
      this.output = publication.output;
    } else if (publication.delta) {
      this.output += publication.delta;
      progress = true;
    }
    if (publication.steps !== undefined) {
      progress ||= publication.steps.length !== this.steps.length;
      this.steps = publication.steps;
    } else if (publication.step !== undefined) {
      // A new array: snapshots already handed out keep theirs.
      this.steps = [...this.steps, publication.step];
      progress = true;
    }
    if (publication.status !== undefined) {
      const status = readStatus(publication.status);
      progress ||= status !== this.status;
      this.status = status;
      if (isTerminal(status)) return "terminal";
    }
    return progress ? "progress" : "ignored";
  }

  /**
   * The snapshot to hand on, given the list's latest: the list's when it is terminal (the confirmed
   * answer) or once the two disagreed; otherwise the longer of two outputs of which one extends
   * the other, the longer list of steps, and PROCESSING once the channel shows work begun.
   */
  merge(list: QuerySnapshot): QuerySnapshot {
    if (isTerminal(list.status) || this.disagreed) return list;
    const channel = this.output;
    let output = list.output;
    if (channel.length > output.length ? !channel.startsWith(output) : !output.startsWith(channel)) {
      this.disagreed = true;
      return list;
    }
    if (channel.length > output.length) output = channel;
    const steps = this.steps.length > list.steps.length ? [...this.steps] : list.steps;
    const begun = this.status === "PROCESSING" || output !== "" || steps.length > 0;
    const status = list.status === "PENDING" && begun ? "PROCESSING" : list.status;
    if (output === list.output && steps === list.steps && status === list.status) return list;
    return { ...list, output, steps, status };
  }
}

/** A published status as the interface's statuses; an unknown one reads as PROCESSING. */
function readStatus(value: string): QueryStatus {
  const status = value.toUpperCase();
  return status === "PENDING" || status === "PROCESSED" || status === "FAILED" ? status : "PROCESSING";
}
