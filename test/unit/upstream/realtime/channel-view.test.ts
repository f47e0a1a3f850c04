import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChannelView } from "../../../../src/upstream/realtime/channel-view.js";
import { snapshot } from "../../../helpers/snapshots.js";

describe("ChannelView", () => {
  it("appends deltas, and hands on the channel's text while the list shows less", () => {
    const view = new ChannelView(snapshot("PENDING"), 4);
    expect(view.apply({ delta: "Hello" }, 5)).toBe("progress");
    expect(view.apply({ delta: " world" }, 6)).toBe("progress");
    expect(view.merge(snapshot("PENDING"))).toMatchObject({ status: "PROCESSING", output: "Hello world" });
    expect(view.merge(snapshot("PROCESSING", "Hello"))).toMatchObject({ output: "Hello world" });
  });

  it("hands on the list's text when the list is ahead, and the channel catching up changes nothing", () => {
    const view = new ChannelView(snapshot("PROCESSING"), 0);
    view.apply({ delta: "Hello" }, 1);
    const list = snapshot("PROCESSING", "Hello world, again");
    expect(view.merge(list)).toBe(list);
    view.apply({ delta: " world" }, 2);
    expect(view.merge(list).output).toBe("Hello world, again");
    view.apply({ delta: ", again and more" }, 3);
    expect(view.merge(list).output).toBe("Hello world, again and more");
  });

  it("drops publications it has seen (after a recovery) and reports a hole in the offsets", () => {
    const view = new ChannelView(snapshot("PROCESSING"), 10);
    expect(view.apply({ delta: "a" }, 11)).toBe("progress");
    expect(view.apply({ delta: "a" }, 11)).toBe("duplicate");
    expect(view.apply({ delta: "a" }, 9)).toBe("duplicate");
    expect(view.apply({ delta: "c" }, 13)).toBe("gap");
    expect(view.merge(snapshot("PROCESSING")).output).toBe("a");
  });

  it("reports a terminal status, but merges it only as the list confirms it, with the list's answer", () => {
    const view = new ChannelView(snapshot("PROCESSING"), 0);
    view.apply({ delta: "The answer [1]" }, 1);
    expect(view.apply({ status: "processed" }, 2)).toBe("terminal");
    expect(view.merge(snapshot("PROCESSING"))).toMatchObject({ status: "PROCESSING", output: "The answer [1]" });
    const confirmed = { ...snapshot("PROCESSED", "The answer [1].\n\nSources:\n[1] a.md"), usage: { prompt_tokens: 3, completion_tokens: 4 } };
    expect(view.merge(confirmed)).toBe(confirmed);
  });

  it("sets the channel aside for good at the first disagreement with the list", () => {
    const view = new ChannelView(snapshot("PROCESSING"), 0);
    view.apply({ delta: "Hello wrold" }, 1);
    const list = snapshot("PROCESSING", "Hello world");
    expect(view.merge(list)).toBe(list);
    expect(view.diverged).toBe(true);
    view.apply({ delta: "!" }, 2);
    expect(view.merge(snapshot("PROCESSING", "Hello world"))).toMatchObject({ output: "Hello world" });
  });

  it("takes `output` as the text so far (over a `delta` beside it), and steps one by one or whole", () => {
    const view = new ChannelView(snapshot("PROCESSING", "", [{ text: "first" }]), 0);
    view.apply({ output: "Full text", delta: "ignored" }, 1);
    view.apply({ step: { tool: "search" } }, 2);
    expect(view.merge(snapshot("PROCESSING"))).toMatchObject({ output: "Full text", steps: [{ text: "first" }, { tool: "search" }] });
    view.apply({ steps: [{ text: "a" }, { text: "b" }, { text: "c" }] }, 3);
    expect(view.merge(snapshot("PROCESSING", "", [{ text: "a" }])).steps).toHaveLength(3);
  });

  it("ignores what it does not understand, and publications without offsets are taken in order", () => {
    const view = new ChannelView(snapshot("PROCESSING"), 0);
    for (const data of ["text", 42, null, [1, 2], { unknown: true }, { delta: 7, status: ["x"] }]) {
      expect(view.apply(data, undefined)).toBe("ignored");
    }
    expect(view.apply({ delta: "ok" }, undefined)).toBe("progress");
    expect(view.merge(snapshot("PROCESSING")).output).toBe("ok");
  });

  it("hands on ever-longer prefixes of the answer, whatever the interleaving of channel and list", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 30 }),
        (deltas, schedule) => {
          const final = deltas.join("");
          const view = new ChannelView(snapshot("PENDING"), 0);
          let published = 0;
          let listShows = 0;
          let handedOn = "";
          for (const [fromChannel, step] of schedule) {
            if (fromChannel && published < deltas.length) {
              view.apply({ delta: deltas[published] }, published + 1);
              published += 1;
            } else {
              // The list shows a prefix of the final text, never shorter than it showed before.
              listShows = Math.min(final.length, listShows + (step % 8));
            }
            const output = view.merge(snapshot("PROCESSING", final.slice(0, listShows))).output;
            expect(final.startsWith(output)).toBe(true);
            expect(output.startsWith(handedOn)).toBe(true);
            handedOn = output;
          }
          expect(view.diverged).toBe(false);
          expect(view.merge(snapshot("PROCESSED", final)).output).toBe(final);
        },
      ),
    );
  });
});
