/**
 * One server-sent event as a dialect encodes it: an optional event name (the Responses API names
 * its events; chat completions send data-only frames) and its data, a JSON value, or a string
 * written as it is (chat's `[DONE]`).
 */
export interface SseFrame {
  event?: string;
  data: string | object;
}
