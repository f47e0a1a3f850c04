import { connect, type Socket } from "node:net";

/** One HTTP/1.1 response as it crossed the wire: the status, the headers and the de-chunked body. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** How many chunks a chunked body came in (0 for a body with a length). */
  chunks: number;
}

/**
 * An HTTP/1.1 connection read byte by byte, with the body's framing checked strictly: a chunked
 * body must be well-formed hex-sized chunks ending with the zero-length chunk, and whatever
 * follows a response on the connection is the next response's status line or nothing. Clients'
 * own parsers forgive or hide framing faults (they stop at the terminator and reset): this one
 * reports them.
 */
export class RawHttpConnection {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private waiting: (() => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (data: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      this.wake();
    });
    socket.on("end", () => {
      this.ended = true;
      this.wake();
    });
    socket.on("error", () => {
      this.ended = true;
      this.wake();
    });
  }

  /** Opens a connection to the host and port of `url`. */
  static async open(url: string): Promise<RawHttpConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    return new RawHttpConnection(socket);
  }

  /** Sends one request on the connection (kept alive). */
  send(method: string, path: string, headers: Record<string, string>, body?: string): void {
    const lines = [`${method} ${path} HTTP/1.1`, "host: localhost", "connection: keep-alive"];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
    this.socket.write(`${lines.join("\r\n")}\r\n\r\n${body ?? ""}`);
  }

  /** Reads the next whole response, checking its framing; throws on any fault. */
  async readResponse(): Promise<RawResponse> {
    const head = (await this.readUntil("\r\n\r\n")).toString("latin1");
    const [statusLine, ...headerLines] = head.split("\r\n");
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? "");
    if (!status) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    if (headers["transfer-encoding"] === "chunked") {
      const parts: Buffer[] = [];
      for (;;) {
        const sizeLine = (await this.readUntil("\r\n")).toString("latin1");
        if (!/^[0-9a-f]+$/i.test(sizeLine)) throw new Error(`bad chunk size line after ${parts.length} chunks: ${JSON.stringify(sizeLine.slice(0, 80))}`);
        const size = Number.parseInt(sizeLine, 16);
        if (size === 0) {
          const trailer = await this.readUntil("\r\n");
          if (trailer.length !== 0) throw new Error(`unexpected trailer: ${JSON.stringify(trailer.toString("latin1"))}`);
          return { status: Number(status[1]), headers, body: Buffer.concat(parts), chunks: parts.length };
        }
        const chunk = await this.readBytes(size + 2);
        if (chunk.subarray(size).toString("latin1") !== "\r\n") throw new Error(`chunk ${parts.length} of ${size} bytes not followed by CRLF`);
        parts.push(chunk.subarray(0, size));
      }
    }
    const length = Number(headers["content-length"] ?? 0);
    return { status: Number(status[1]), headers, body: await this.readBytes(length), chunks: 0 };
  }

  /**
   * Waits for the server to close the connection and returns what it sent after the last response
   * read (nothing, when every response ended where its framing said).
   */
  async rest(): Promise<Buffer> {
    while (!this.ended) await this.next();
    return this.buffer;
  }

  close(): void {
    this.socket.destroy();
  }

  private async readUntil(delimiter: string): Promise<Buffer> {
    for (;;) {
      const at = this.buffer.indexOf(delimiter, 0, "latin1");
      if (at >= 0) {
        const found = this.buffer.subarray(0, at);
        this.buffer = this.buffer.subarray(at + delimiter.length);
        return found;
      }
      if (this.ended) throw new Error(`connection ended before ${JSON.stringify(delimiter)}; left: ${JSON.stringify(this.buffer.toString("latin1").slice(0, 80))}`);
      await this.next();
    }
  }

  private async readBytes(count: number): Promise<Buffer> {
    while (this.buffer.length < count) {
      if (this.ended) throw new Error(`connection ended ${count - this.buffer.length} bytes short`);
      await this.next();
    }
    const bytes = this.buffer.subarray(0, count);
    this.buffer = this.buffer.subarray(count);
    return bytes;
  }

  private next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
