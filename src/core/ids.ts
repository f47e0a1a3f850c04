/**
 * The one pattern of ids the adapter accepts and forwards: workspace ids, query ids and the
 * workspace part of a model. Letters, digits and `._:-`, at most 128, so an id is always a valid
 * header value and path segment (ids the adapter creates are UUIDs, which match).
 */
export const ID_SOURCE = "[A-Za-z0-9][A-Za-z0-9._:-]{0,127}";

/** A whole string that is an id. */
export const ID_PATTERN = new RegExp(`^${ID_SOURCE}$`);

/** The message of a 422 for a value that is not an id. */
export const ID_MESSAGE = `String should match pattern '^${ID_SOURCE}$'`;

/** Whether a value is an id. */
export function isId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}
