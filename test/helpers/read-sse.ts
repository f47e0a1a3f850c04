import { createParser, type EventSourceMessage } from "eventsource-parser";

/** A raw streamed response: its status, headers, exact text and parsed events. */
export interface RawStream {
  status: number;
  headers: Headers;
  raw: string;
  events: EventSourceMessage[];
  /** The `data` of each event as JSON, `[DONE]` as the string. */
  data: any[];
}

/** Parses SSE text the way a client would, feeding it in the given slices of bytes. */
export function parseSse(bytes: Uint8Array, sliceSizes: (index: number) => number = () => bytes.length): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder();
  for (let offset = 0, index = 0; offset < bytes.length; index += 1) {
    const size = Math.max(1, sliceSizes(index));
    parser.feed(decoder.decode(bytes.subarray(offset, offset + size), { stream: true }));
    offset += size;
  }
  parser.feed(decoder.decode());
  return events;
}

/** POSTs a streaming request and reads the whole response as bytes. */
export async function postStream(url: string, headers: Record<string, string>, body: unknown): Promise<RawStream> {
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const events = parseSse(bytes);
  return {
    status: response.status,
    headers: response.headers,
    raw: new TextDecoder().decode(bytes),
    events,
    data: events.map((event) => (event.data === "[DONE]" ? "[DONE]" : JSON.parse(event.data))),
  };
}
