import { z } from "zod";

// The recording `check --record DIR` writes to DIR/recording.json (docs/check.md#the-recording-format):
// every HTTP exchange and realtime frame of the run, in the order they happened, redacted. A
// replay (test/helpers/replay-upstream.ts) serves it back as an upstream. One schema, so the
// writer and every reader agree.

/** The `format` value of a recording. */
export const RECORDING_FORMAT = "workspace-openai-adapter/recording";
/** The version of the format this code writes and reads. */
export const RECORDING_VERSION = 1;

/** A body as recorded: JSON when it parsed as JSON, else its text (or nothing). */
export const recordedBodySchema = z.union([
  z.object({ json: z.unknown() }),
  z.object({ text: z.string() }),
  z.null(),
]);
/** One recorded body. */
export type RecordedBody = z.infer<typeof recordedBodySchema>;

/** One HTTP request and what answered it. */
export const recordedExchangeSchema = z.object({
  /** Order of the run's events, HTTP and realtime together: a response's place is when it arrived. */
  seq: z.int().nonnegative(),
  /** Milliseconds since the run began, when the request was sent. */
  at: z.number().nonnegative(),
  /** The check that made it (`health`, `query.ask`, `adapter-answer`, …). */
  probe: z.string(),
  request: z.object({
    method: z.string(),
    /** The path below the base URL's own path, without the query string. */
    path: z.string(),
    /** The query string, without `?` (cursors kept: the service's own, opaque). */
    query: z.string(),
    /** Only `service-workspace`, `content-type` and `authorization`, whose credential is a label: `Bearer <credential>` or `Bearer <made-up-credential>`. */
    headers: z.record(z.string(), z.string()),
    body: recordedBodySchema,
  }),
  /** What answered, or `error` when nothing did (the connection failed, or the caller gave up first). */
  response: z.union([
    z.object({
      status: z.int(),
      /** Only `content-type` and `retry-after`. */
      headers: z.record(z.string(), z.string()),
      body: recordedBodySchema,
      /** Milliseconds from sending the request to the end of the response. */
      durationMs: z.number().nonnegative(),
    }),
    z.object({ error: z.string(), durationMs: z.number().nonnegative() }),
  ]),
});
/** One recorded HTTP exchange. */
export type RecordedExchange = z.infer<typeof recordedExchangeSchema>;

/** One frame of a realtime connection: the protocol's messages it carried (one frame may batch several). */
export const recordedFrameSchema = z.object({
  seq: z.int().nonnegative(),
  at: z.number().nonnegative(),
  from: z.enum(["client", "server"]),
  messages: z.array(z.unknown()),
});
/** One recorded realtime frame. */
export type RecordedFrame = z.infer<typeof recordedFrameSchema>;

/** One realtime (Centrifugo protocol) connection: where it went, its frames, and how it ended. */
export const recordedConnectionSchema = z.object({
  seq: z.int().nonnegative(),
  at: z.number().nonnegative(),
  probe: z.string(),
  /** The `ws_url` the service named, without its query string and userinfo. */
  url: z.string(),
  /** False when the endpoint could not be reached (no frames then). */
  opened: z.boolean(),
  frames: z.array(recordedFrameSchema),
  close: z.object({ seq: z.int().nonnegative(), by: z.enum(["client", "server"]), code: z.int(), reason: z.string() }).nullable(),
});
/** One recorded realtime connection. */
export type RecordedConnection = z.infer<typeof recordedConnectionSchema>;

/** A whole recording. */
export const recordingSchema = z.object({
  format: z.literal(RECORDING_FORMAT),
  version: z.literal(RECORDING_VERSION),
  recordedAt: z.string(),
  adapterVersion: z.string(),
  /** The service's origin (no userinfo) and the path its base URL adds. */
  upstream: z.object({ origin: z.string(), basePath: z.string() }),
  /** `kept` with `--record-content`; `redacted` replaced content with placeholders of the same shape. */
  content: z.enum(["kept", "redacted"]),
  modeField: z.string(),
  exchanges: z.array(recordedExchangeSchema),
  realtime: z.array(recordedConnectionSchema),
});
/** A whole recording. */
export type Recording = z.infer<typeof recordingSchema>;
