import { readInstructions } from "../structured/instruction-block.js";
import { type AnswerScript, bestSentences, composeAnswer, type EmbeddedMode, referenceOf, type ScriptSource } from "./compose-answer.js";
import type { DocumentIndex, Hit } from "./document-index.js";

/**
 * How the embedded workspace answers a question that carries the adapter's instruction block
 * (docs/structured-answers.md#the-embedded-workspaces-json-mode): `trailing-sources` (the default)
 * writes the JSON then a `Sources:` list, `bare` the JSON alone, `fenced` the JSON in a code fence;
 * a test's switch makes it answer `prose` first, `invalid-once` (JSON that does not match, then a
 * matching repair) or `invalid-always`.
 */
export type JsonStyle = "trailing-sources" | "bare" | "fenced" | "prose" | "invalid-once" | "invalid-always";

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);
const MAX_DEPTH = 12;
/**
 * Most items one array gets, and most values one answer holds, whatever the schema's `minItems`
 * ask (docs/structured-answers.md#the-embedded-workspaces-json-mode): the stand-in builds its
 * answer inside the adapter's process, and nested `minItems` multiply (1000×1000 took 16 s and
 * 1.45 GB). Past them the answer is cut short and may not match the schema.
 */
export const MAX_JSON_ITEMS = 50;
export const MAX_JSON_VALUES = 5000;

/** What filling a schema draws on: the best passages, each with its source number, and the day. */
class Filling {
  readonly numbered: { hit: Hit; number: number }[];
  private readonly used = new Map<Hit, number>();
  /** Values this answer may still hold (`MAX_JSON_VALUES`). */
  private valuesLeft = MAX_JSON_VALUES;

  constructor(
    hits: readonly Hit[],
    private readonly question: string,
    private readonly root: Schema,
    readonly today: string,
  ) {
    this.numbered = hits.map((hit, index) => ({ hit, number: index + 1 }));
  }

  /** The passage's next sentence (they take turns), with its citation marker. */
  sentence(at: { hit: Hit; number: number }): string {
    const sentences = bestSentences(at.hit.text, this.question, 3);
    const turn = this.used.get(at.hit) ?? 0;
    this.used.set(at.hit, turn + 1);
    return `${sentences[turn % Math.max(sentences.length, 1)] ?? at.hit.heading} [${at.number}]`;
  }

  /** Takes one value from the answer's allowance; false once it is spent. */
  takeValue(): boolean {
    if (this.valuesLeft <= 0) return false;
    this.valuesLeft -= 1;
    return true;
  }

  /** Items an array may get: what the schema asks, within `MAX_JSON_ITEMS` and what the answer has left. */
  items(wanted: number): number {
    return Math.max(0, Math.min(wanted, MAX_JSON_ITEMS, this.valuesLeft));
  }

  /** A local reference (`#/$defs/x`), resolved in the schema; null when it points elsewhere. */
  resolve(reference: string): Schema | null {
    if (!reference.startsWith("#")) return null;
    let node: unknown = this.root;
    for (const part of reference.slice(1).split("/").filter(Boolean)) {
      node = isSchema(node) ? node[decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~")] : undefined;
    }
    return isSchema(node) ? node : null;
  }
}

/** The first type a schema allows other than null. */
function typeOf(schema: Schema): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find((item) => item !== "null") : schema.type;
  if (typeof type === "string") return type;
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

const clamp = (value: number, schema: Schema, low: string, high: string) =>
  Math.min(Math.max(value, typeof schema[low] === "number" ? (schema[low] as number) : value), typeof schema[high] === "number" ? (schema[high] as number) : value);

/**
 * A value for `schema` from the passages: strings are sentences with their markers (a name, title
 * or heading is the passage's heading), arrays hold one item per passage, an enum its first value,
 * numbers count the passages, a date is the day's. Deterministic, and as close to the schema as
 * an extractive stand-in can be (a `pattern` is not followed), within `MAX_JSON_ITEMS` items an
 * array and `MAX_JSON_VALUES` values an answer (null past them).
 */
function fill(schema: unknown, filling: Filling, at: { hit: Hit; number: number }, key: string, depth: number): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH || !filling.takeValue()) return null;
  if (typeof schema.$ref === "string") return fill(filling.resolve(schema.$ref), filling, at, key, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0] ?? null;
  const branches = [schema.anyOf, schema.oneOf, schema.allOf].find(Array.isArray) as unknown[] | undefined;
  if (branches && typeOf(schema) === undefined) {
    const branch = branches.find((item) => isSchema(item) && item.type !== "null") ?? branches[0];
    return fill(branch, filling, at, key, depth + 1);
  }
  switch (typeOf(schema)) {
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : { answer: { type: "string" } };
      const entries = Object.entries(properties).map(([name, property]) => [name, fill(property, filling, at, name, depth + 1)]);
      return Object.fromEntries(entries);
    }
    case "array": {
      const count = filling.items(clamp(filling.numbered.length, schema, "minItems", "maxItems"));
      const itemOf = (index: number) => filling.numbered[index % filling.numbered.length] ?? at;
      return Array.from({ length: count }, (_, index) => fill(schema.items, filling, itemOf(index), key, depth + 1));
    }
    case "integer":
    case "number":
      return clamp(filling.numbered.length, schema, "minimum", "maximum");
    case "boolean":
      return filling.numbered.length > 0;
    case "null":
      return null;
    default:
      return fillString(schema, filling, at, key);
  }
}

function fillString(schema: Schema, filling: Filling, at: { hit: Hit; number: number }, key: string): string {
  if (schema.format === "date") return filling.today.slice(0, 10);
  if (schema.format === "date-time") return filling.today;
  if (schema.format === "uri" || schema.format === "url") return `urn:workspace-document:${encodeURIComponent(at.hit.filename)}`;
  const text = /name|title|heading|label/i.test(key) ? at.hit.heading || at.hit.title || at.hit.filename : filling.sentence(at);
  return typeof schema.maxLength === "number" ? [...text].slice(0, schema.maxLength).join("") : text;
}

/** A value of the wrong type for `schema`'s root: what a workspace that did not follow the schema writes. */
function mismatched(schema: Schema, value: unknown): unknown {
  return typeOf(schema) === "array" ? { items: value } : [value];
}

/**
 * The embedded workspace's answer to a question with the instruction block, or null when the
 * content has none (an ordinary question). The JSON fills the schema from the best passages
 * (`fill`); the sources are the passages, numbered as the markers number them.
 */
export function composeJsonAnswer(
  question: { content: string; mode: EmbeddedMode; previousContent?: string | undefined },
  index: DocumentIndex,
  style: JsonStyle,
  now: number,
): AnswerScript | null {
  const instructions = readInstructions(question.content);
  if (!instructions) return null;
  const { previousContent } = question;
  const previous = previousContent === undefined ? undefined : (readInstructions(previousContent)?.question ?? previousContent);
  const asked = instructions.repair && previous !== undefined ? previous : instructions.question;
  if (style === "prose" && !instructions.repair) return composeAnswer({ prompt: asked, mode: question.mode, previousPrompt: undefined }, index);
  const hits = index.search(asked, question.mode === "ask" ? 3 : 5);
  const schema = isSchema(instructions.schema) ? instructions.schema : { type: "object", properties: { answer: { type: "string" } } };
  const lead = instructions.repair ? "Correcting the JSON." : `Looking for “${asked.slice(0, 80)}” to fill the schema.`;
  const steps: AnswerScript["steps"] = [{ text: lead }, { tool: "search_documents" }];
  const filling = new Filling(hits, asked, schema, new Date(now).toISOString());
  const first = filling.numbered[0];
  let value = first ? fill(schema, filling, first, "", 0) : {};
  const invalid = style === "invalid-always" || (style === "invalid-once" && !instructions.repair);
  if (invalid) value = mismatched(schema, value);
  steps.push({ text: `Filled the schema from ${hits.length} passage${hits.length === 1 ? "" : "s"}.` });
  const json = JSON.stringify(value, null, 2);
  const sources: ScriptSource[] = hits.map((hit) => ({
    filename: hit.filename,
    title: hit.heading || hit.title || null,
    page: hit.page,
    snippet: hit.text.slice(0, 300),
  }));
  const list = hits.length > 0 ? `\n\nSources:\n${hits.map((hit, at) => `[${at + 1}] ${referenceOf(hit)}`).join("\n")}` : "";
  if (style === "bare") return { steps, output: json, sources };
  if (style === "fenced") return { steps, output: `\`\`\`json\n${json}\n\`\`\`${list}`, sources: [] };
  return { steps, output: `${json}${list}`, sources: [] };
}
