import { exchange, type Exchanged } from "./exchange.js";

/** A POST of JSON from a given loopback address, with extra headers: status, headers, body. */
export function postFrom(url: string, body: string, localAddress: string, headers: Record<string, string> = {}): Promise<Exchanged> {
  return exchange(url, { method: "POST", body, localAddress, headers });
}
