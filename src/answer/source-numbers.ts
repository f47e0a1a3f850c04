import { type SourceRecord, sourceKey } from "../core/source-record.js";
import { parseReferences } from "./parse-references.js";

/** An answer's text without its own references list, and the number its markers use for each source. */
export interface NumberedSources {
  /** The output with a closing references section left out (the sources list says the same, with links). */
  body: string;
  /** Per source of the answer (same order), the number a `[n]` marker in the text uses for it. */
  numbers: number[];
}

/**
 * Numbers an answer's sources the way its text does (docs/upstream-assumptions.md#sources-and-citations),
 * for a dialect that writes its own sources list under the answer: a source listed in the output's
 * references section keeps that entry's number; otherwise a source keeps its position (numbered
 * markers point into the structured sources by position). Numbers are unique: a source whose
 * number is taken gets the next free one.
 */
export function numberSources(output: string, sources: readonly SourceRecord[]): NumberedSources {
  const references = parseReferences(output);
  const byKey = new Map<string, number>();
  for (const entry of references?.entries ?? []) {
    const key = sourceKey(entry.source);
    if (!byKey.has(key)) byKey.set(key, entry.number);
  }
  const used = new Set<number>();
  const wanted = sources.map((source, index) => (references ? byKey.get(sourceKey(source)) : index + 1));
  const numbers: number[] = [];
  let next = 1;
  for (const number of wanted) {
    if (number !== undefined && !used.has(number)) {
      used.add(number);
      numbers.push(number);
      continue;
    }
    numbers.push(-1);
  }
  // Sources without a number of their own (or whose number was taken) come after the others.
  for (const [index, number] of numbers.entries()) {
    if (number !== -1) continue;
    while (used.has(next) || wanted.includes(next)) next += 1;
    used.add(next);
    numbers[index] = next;
  }
  const body = references ? output.slice(0, references.start).trimEnd() : output;
  return { body, numbers };
}
