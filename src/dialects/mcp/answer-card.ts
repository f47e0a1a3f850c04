import { z } from "zod";

/**
 * The MCP Apps extension (`io.modelcontextprotocol/ui`, stable revision 2026-01-26): the names its
 * specification fixes, as `@modelcontextprotocol/ext-apps` spells them (`EXTENSION_ID`,
 * `RESOURCE_MIME_TYPE`, `RESOURCE_URI_META_KEY`). docs/mcp.md#the-answer-card.
 */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";
/** The MIME type of an MCP App's HTML. */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";
/** The flat, deprecated key some hosts still read a tool's view from (beside `_meta.ui.resourceUri`). */
const LEGACY_RESOURCE_URI_KEY = "ui/resourceUri";

/**
 * The answer card's resource: versioned, since hosts cache a view by its URI (and ChatGPT's review
 * asks for a new one when its policy changes). `scripts/build-answer-card.mjs` writes its HTML.
 */
export const ANSWER_CARD_URI = "ui://workspace/answer-v1.html";

/**
 * What the card may reach: nothing. Its script and styles are inline and it talks only to its host
 * (`postMessage`), so it declares no domain at all; hosts then apply the specification's
 * restrictive default policy (no connections, images only as `data:`). ChatGPT reads the same
 * policy under its own key.
 */
const CARD_META = {
  ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true },
  "openai/widgetCSP": { connect_domains: [], resource_domains: [] },
} as const;

/** The `_meta` of a tool whose result the card shows (`ask`, `reason`, `build`): visible to the model and to the card. */
export function cardToolMeta(): Record<string, unknown> {
  return { ui: { resourceUri: ANSWER_CARD_URI, visibility: ["model", "app"] }, [LEGACY_RESOURCE_URI_KEY]: ANSWER_CARD_URI };
}

/** The card as `resources/list` lists it. */
export function cardListing() {
  return {
    uri: ANSWER_CARD_URI,
    name: "answer-card",
    title: "Workspace answer",
    description: "Shows an answer of ask, reason or build: the answer with its citations linked, the steps, and the sources, each readable in place.",
    mimeType: APP_MIME_TYPE,
    _meta: CARD_META,
  };
}

/** The card as `resources/read` returns it: the whole self-contained HTML, and its policy. */
export function cardContents(html: string) {
  return { uri: ANSWER_CARD_URI, mimeType: APP_MIME_TYPE, text: html, _meta: CARD_META };
}

/** What a 2026-07-28 request's client capabilities say of the extension (only what is read here). */
const appsCapabilitySchema = z.looseObject({ mimeTypes: z.array(z.string()).optional() });
const capabilitiesSchema = z.looseObject({
  extensions: z.looseObject({ [APPS_EXTENSION]: appsCapabilitySchema.optional() }).optional(),
});

/**
 * Whether a 2026-07-28 request's client declares that it renders MCP Apps
 * (`_meta["io.modelcontextprotocol/clientCapabilities"].extensions["io.modelcontextprotocol/ui"]`,
 * its `mimeTypes`, when listed, naming the card's). Every request carries its client's
 * capabilities in that revision, so a host without the extension gets exactly the results it got
 * before the card existed.
 */
export function declaresAnswerCard(meta: Record<string, unknown> | undefined): boolean {
  const parsed = capabilitiesSchema.safeParse(meta?.["io.modelcontextprotocol/clientCapabilities"]);
  const apps = parsed.success ? parsed.data.extensions?.[APPS_EXTENSION] : undefined;
  return apps !== undefined && (apps.mimeTypes === undefined || apps.mimeTypes.includes(APP_MIME_TYPE));
}
