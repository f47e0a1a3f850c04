import { cpSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { API_KEY, FIXTURE_DOCUMENTS, headers, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

const PDF = join(import.meta.dirname, "../../fixtures/pdf/travel-policy.pdf");

describe("the embedded workspace's documents", () => {
  let folder: string;
  let workspace: RunningWorkspace;
  let adapter: RunningAdapter;
  const logged: { level: string; message: string; fields: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "embedded-documents-"));
    cpSync(FIXTURE_DOCUMENTS, folder, { recursive: true });
    cpSync(PDF, join(folder, "travel-policy.pdf"));
    writeFileSync(join(folder, "broken.pdf"), "%PDF-1.4\nthis is not a PDF at all\n");
    workspace = await startEmbeddedWorkspace({
      documents: [folder],
      workspaces: ["acme"],
      apiKeys: [API_KEY],
      stepDelayMs: 0,
      watch: true,
      log: (level, fields, message) => logged.push({ level, fields, message }),
    });
    let listening = "";
    adapter = await startAdapter(workspace.url, {}, undefined, { documents: documentReader([folder]), publicUrl: () => listening });
    listening = adapter.url;
  });
  afterAll(async () => {
    await adapter.close();
    await workspace.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const chat = async (content: string, model = "reason", extra: Record<string, string> = {}) => {
    const response = await fetch(`${adapter.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(extra),
      body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
    });
    return (await response.json()) as any;
  };

  it("skips a PDF it cannot read, with a warning, and reads the others", () => {
    expect(logged).toContainEqual(expect.objectContaining({ level: "warn", fields: expect.objectContaining({ file: join(folder, "broken.pdf") }) }));
  });

  it("answers from a PDF page by page: structured sources with pages and snippets reach message.sources and page-citing annotations", async () => {
    const body = await chat("How much are meals reimbursed on the road?", "reason", { "x-chat-annotations": "url_citation" });
    const message = body.choices[0].message;
    expect(message.content).toContain("[travel-policy.pdf, p. 2]");
    const source = message.sources.find((candidate: any) => candidate.filename === "travel-policy.pdf" && candidate.page === 2);
    expect(source).toMatchObject({ title: "Travel and expenses policy", cited: true, snippet: expect.stringContaining("60 euros") });
    const annotation = message.annotations.find((candidate: any) => candidate.url_citation.url.includes("travel-policy.pdf"));
    expect(annotation.url_citation.url).toMatch(/\/documents\/acme\/travel-policy\.pdf\?page=2&quote=/);
    // The link opens that page, with the passage highlighted.
    const page = await (await fetch(annotation.url_citation.url)).text();
    expect(page).toContain("page 2 of 3");
    expect(page).toMatch(/<mark id="cited">[^<]*60 euros/);
    expect(page).not.toContain("Trips abroad");
  });

  it("gives the Responses API's annotations the same pages and snippets: in the url_citation's link, or a file_citation's fields", async () => {
    const ask = async (extra: Record<string, string> = {}) => {
      const body = JSON.stringify({ model: "reason", input: "How much are meals reimbursed on the road?" });
      const response = (await (await fetch(`${adapter.url}/v1/responses`, { method: "POST", headers: headers(extra), body })).json()) as any;
      return response.output.at(-1).content[0].annotations as any[];
    };
    const linked = (await ask()).find((annotation) => annotation.url.includes("travel-policy.pdf"));
    expect(linked).toMatchObject({ type: "url_citation", title: "Travel and expenses policy", url: expect.stringMatching(/\/documents\/acme\/travel-policy\.pdf\?page=2&quote=.*60\+euros/) });
    const files = await ask({ "x-responses-annotations": "file_citation" });
    expect(files).toContainEqual(expect.objectContaining({ filename: "travel-policy.pdf", page: 2, snippet: expect.stringContaining("60 euros") }));
  });

  it("re-indexes when a document is added, changed or removed, and says so", async () => {
    // How soon (within a second on a quiet machine) is not checked: a busy machine reads and indexes slower.
    const before = logged.length;
    writeFileSync(join(folder, "zebrafish.md"), "# Zebrafish\n\nThe zebrafish quota is seven fish per tank in every laboratory.\n");
    await expect.poll(async () => (await chat("What is the zebrafish quota per tank?", "ask")).choices[0].message.content, { timeout: 10_000, interval: 50 }).toContain("seven fish per tank");
    writeFileSync(join(folder, "zebrafish.md"), "# Zebrafish\n\nThe zebrafish quota is nine fish per tank since the new rules.\n");
    await expect.poll(async () => (await chat("What is the zebrafish quota per tank?", "ask")).choices[0].message.content, { timeout: 10_000, interval: 50 }).toContain("nine fish per tank");
    unlinkSync(join(folder, "zebrafish.md"));
    await expect.poll(async () => (await chat("What is the zebrafish quota per tank?", "ask")).choices[0].message.content, { timeout: 10_000, interval: 50 }).not.toContain("fish per tank");
    expect(logged.slice(before).filter((entry) => entry.message === "embedded workspace: documents re-indexed").length).toBeGreaterThanOrEqual(3);
  });
});
