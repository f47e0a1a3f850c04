import type { CallToolResult } from "@modelcontextprotocol/server";
import type { SourceLinker } from "../../answer/source-links.js";
import type { DocumentReader } from "../../core/document-reader.js";
import { fetchResult, toolError } from "./encode-tool-result.js";
import { readSourceId } from "./source-ids.js";

/**
 * MCP's `fetch` tool (docs/architecture/mcp.md#mcp-tools): what the adapter knows of a source `search`
 * (or an answer shown in the answer card) returned, the whole document when it can read it (the
 * embedded workspace's), its cited passage otherwise. Asks the workspace nothing; a bad or foreign
 * id is a tool error that says what to do.
 */
export async function fetchTool(
  id: string,
  { workspace, links, documents }: { workspace: string; links: SourceLinker; documents: DocumentReader | undefined },
): Promise<CallToolResult> {
  const reference = readSourceId(id);
  if (!reference) return toolError(`'${id}' is not an id that search returned: call search, then fetch one of its results' ids`);
  if (reference.workspace !== workspace) {
    return toolError(`The result '${id}' comes from workspace '${reference.workspace}', not '${workspace}': search this workspace first`);
  }
  let document = null;
  if (documents && reference.filename) {
    document = await documents(reference.filename).catch(() => null);
    if (!document) return toolError(`No document '${reference.filename}' in workspace '${workspace}'`);
  }
  return fetchResult(id, reference, document, links(reference).url);
}
