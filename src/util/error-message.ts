/** The message of whatever was thrown or rejected: an Error's own, anything else as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
