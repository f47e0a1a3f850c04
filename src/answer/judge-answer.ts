import type { Citation } from "./answer-events.js";
import { citeSources } from "./cite-sources.js";
import type { CitedSource, SourceRecord } from "../core/source-record.js";
import { extractJson } from "../structured/extract-json.js";
import { citationsInStrings, stripCitationMarkers } from "./json-citations.js";
import type { SchemaService } from "../structured/schema-service.js";
import { type StructuredRequest, validationSchemaOf } from "../structured/structured-request.js";

/** A workspace turn's answer, judged against the schema: the JSON to deliver, or what is wrong with it. */
export type Judgement =
  /** `json` is the content to deliver; `citations` span markers inside its strings (none once stripped). */
  | { valid: true; json: string; value: unknown; citations: Citation[]; sources: CitedSource[] }
  /** `problem` is what the repair turn and the failure say (`/items/0/date: …`); `repairable` false when asking again cannot help. */
  | { valid: false; problem: string; repairable: boolean };

/**
 * Judges one turn of a structured answer (docs/structured-answers.md#what-comes-back): takes the
 * first JSON value out of the output, validates it against the caller's schema, and finds the
 * citations in the JSON and what follows it (its `Sources:` list) as for prose, keeping those that
 * are markers inside its strings; `sources` are the turn's structured sources (the answer core's).
 * A source is `cited` by those markers alone. With `strip`, the markers leave the strings (and
 * the citations go), unless the JSON without them no longer validates.
 */
export async function judgeAnswer(
  output: string,
  sources: readonly SourceRecord[],
  request: StructuredRequest,
  validation: SchemaService,
  strip: boolean,
): Promise<Judgement> {
  const extracted = extractJson(output);
  if (!extracted.found) return { valid: false, problem: `/: ${extracted.reason}`, repairable: true };
  const schema = validationSchemaOf(request);
  const verdict = await validation.validate(schema, extracted.value);
  if (!verdict.valid) return { valid: false, problem: `${verdict.pointer || "/"}: ${verdict.message}`, repairable: verdict.repairable };
  const json = extracted.text;
  // Over the JSON and what followed it, without a fence around it (where the answer core reads no marker).
  const found = citeSources(`${json}${extracted.rest}`, [...sources]);
  const citations = citationsInStrings(json, found.citations);
  const sourcesCitedBy = (kept: readonly Citation[]): CitedSource[] =>
    found.sources.map((source, index) => ({ ...source, cited: kept.some((citation) => citation.source === index) }));
  if (strip && citations.length > 0) {
    const stripped = stripCitationMarkers(json, citations);
    const value: unknown = JSON.parse(stripped);
    const stillValid = (await validation.validate(schema, value)).valid;
    if (stillValid) return { valid: true, json: stripped, value, citations: [], sources: sourcesCitedBy(citations) };
  }
  return { valid: true, json, value: extracted.value, citations, sources: sourcesCitedBy(citations) };
}
