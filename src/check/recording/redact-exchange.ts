import type { IncomingHttpHeaders } from "node:http";
import { ContentRedactor } from "./redact-content.js";
import { type Secrets, withoutTokens } from "./redact-secrets.js";
import type { RecordedBody } from "./recording-format.js";

/** What a recording must know to redact an exchange: the credentials to label, the secrets, whether content stays. */
export interface RedactionOptions {
  credentials: { configured: string; madeUp: string };
  secrets: Secrets;
  keepContent: boolean;
  modeField: string;
}

/** Request headers a recording keeps (`authorization` only as a label). */
const KEPT_REQUEST_HEADERS = ["service-workspace", "content-type"];
/** Response headers a recording keeps. */
const KEPT_RESPONSE_HEADERS = ["content-type", "retry-after"];

/**
 * What a recording keeps of one exchange or frame (docs/check.md#what-a-recording-keeps): the
 * credential as a label, tokens out (and learnt, so that their copies go too), every known secret
 * scrubbed, and the content as placeholders of the same shape unless it is kept.
 */
export class ExchangeRedaction {
  private readonly content: ContentRedactor;

  constructor(private readonly options: RedactionOptions) {
    this.content = new ContentRedactor(options.modeField);
  }

  /** A body as recorded: its JSON redacted, or its text. */
  body(body: Buffer, contentType: string | undefined): RecordedBody {
    if (body.length === 0) return null;
    const text = body.toString("utf8");
    if (contentType?.includes("json")) {
      try {
        return { json: this.json(JSON.parse(text)) };
      } catch {
        // Recorded as the text it is.
      }
    }
    const scrubbed = this.options.secrets.scrub(text);
    return { text: this.options.keepContent ? scrubbed : this.content.text(scrubbed) };
  }

  /** One realtime protocol message (a line of a frame) as recorded. */
  message(line: string): unknown {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      message = line;
    }
    return this.json(message);
  }

  /** The request headers kept, the credential as `Bearer <credential>` or `Bearer <made-up-credential>`. */
  requestHeaders(headers: IncomingHttpHeaders): Record<string, string> {
    const kept = pick(headers, KEPT_REQUEST_HEADERS);
    const authorization = headers.authorization;
    if (typeof authorization === "string") {
      const credential = authorization.replace(/^Bearer\s+/i, "");
      const { configured, madeUp } = this.options.credentials;
      kept.authorization = `Bearer <${credential === configured ? "credential" : credential === madeUp ? "made-up-credential" : "other-credential"}>`;
    }
    return kept;
  }

  /** The response headers kept. */
  responseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
    return pick(headers, KEPT_RESPONSE_HEADERS);
  }

  private json(value: unknown): unknown {
    const scrubbed = this.options.secrets.scrubJson(withoutTokens(value, this.options.secrets));
    return this.options.keepContent ? scrubbed : this.content.json(scrubbed);
  }
}

function pick(headers: Record<string, string | string[] | undefined>, names: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === "string") kept[name] = value;
  }
  return kept;
}
