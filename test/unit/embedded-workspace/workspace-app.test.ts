import request from "supertest";
import { describe, expect, it } from "vitest";
import { DocumentIndex, loadPassages } from "../../../src/embedded-workspace/document-index.js";
import { createEmbeddedWorkspace } from "../../../src/embedded-workspace/workspace-app.js";
import { FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";

const index = new DocumentIndex(await loadPassages([FIXTURE_DOCUMENTS]));
const auth = { authorization: "Bearer sk-1", "service-workspace": "acme" };

function workspace(stepDelayMs = 0, now = () => Date.now()) {
  return createEmbeddedWorkspace({
    index,
    workspaces: ["acme", "globex"],
    apiKeys: ["sk-1"],
    stepDelayMs,
    clock: { now, setTimeout, clearTimeout },
  });
}

describe("embedded workspace", () => {
  it("enforces the interface's 401 and 422 rules", async () => {
    const { app } = workspace();
    expect((await request(app).get("/queries")).status).toBe(401);
    expect(
      (await request(app).get("/queries").set({ authorization: "Bearer nope", "service-workspace": "acme" }))
        .body,
    ).toEqual({ detail: "Invalid API key" });
    const missing = await request(app).get("/queries").set({ authorization: "Bearer sk-1" });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(["header", "service-workspace"]);
    for (const limit of ["0", "101", "x"])
      expect((await request(app).get(`/queries?limit=${limit}`).set(auth)).status).toBe(422);
    expect((await request(app).get("/queries?cursor=garbage").set(auth)).status).toBe(422);
    expect((await request(app).post("/queries").set(auth).send({ id: "x" })).status).toBe(422);
    expect((await request(app).get("/health")).status).toBe(200);
  });

  it("gives 404 for a query id that belongs to another workspace", async () => {
    const { app } = workspace();
    await request(app).post("/queries").set(auth).send({ content: "leave", id: "shared-id" }).expect(200);
    const other = await request(app)
      .post("/queries")
      .set({ ...auth, "service-workspace": "globex" })
      .send({ content: "leave", id: "shared-id" });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: "Query not found" });
  });

  it("paginates newest first with opaque cursors until has_more is false", async () => {
    const { app } = workspace();
    for (let number = 0; number < 45; number += 1) {
      await request(app)
        .post("/queries")
        .set(auth)
        .send({ content: `leave ${number}`, id: `q${number}` })
        .expect(200);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response: request.Response = await request(app)
        .get(`/queries?limit=20${cursor ? `&cursor=${cursor}` : ""}`)
        .set(auth);
      seen.push(...response.body.data.map((query: { id: string }) => query.id));
      expect(Object.keys(response.body.data[0]).sort()).toEqual([
        "content",
        "id",
        "output",
        "status",
        "steps",
      ]);
      cursor = response.body.next_cursor;
      expect(response.body.has_more).toBe(cursor !== null);
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, number) => `q${44 - number}`));
  });

  it("moves a query through PENDING and PROCESSING with growing steps and output to PROCESSED", async () => {
    let now = 1_000_000;
    const { app } = workspace(100, () => now);
    const created = await request(app)
      .post("/queries")
      .set(auth)
      .send({ content: "How much leave do I get?", id: "q1", mode: "ask" });
    expect(created.body).toMatchObject({ id: "q1", status: "PENDING", output: "", steps: [] });
    const seen: { status: string; steps: number; output: string }[] = [];
    for (let step = 0; step < 30; step += 1) {
      now += 50;
      const item = (await request(app).get("/queries").set(auth)).body.data[0];
      seen.push({ status: item.status, steps: item.steps.length, output: item.output });
    }
    const last = seen.at(-1);
    expect(last?.status).toBe("PROCESSED");
    expect(last?.output).toMatch(/25 days of paid annual leave.*\[1\]/s);
    for (let position = 1; position < seen.length; position += 1) {
      const before = seen[position - 1];
      const after = seen[position];
      expect(after?.output.startsWith(before?.output ?? "")).toBe(true);
      expect(after?.steps).toBeGreaterThanOrEqual(before?.steps ?? 0);
    }
    expect(new Set(seen.map((entry) => entry.output)).size).toBeGreaterThan(3);
  });

  it("answers differently by mode, and continues a thread under the same id", async () => {
    const { app, control } = workspace();
    const ask = await request(app)
      .post("/queries")
      .set(auth)
      .send({ content: "remote work and leave", mode: "ask" });
    const reason = await request(app)
      .post("/queries")
      .set(auth)
      .send({ content: "remote work and leave", mode: "reason" });
    const build = await request(app)
      .post("/queries")
      .set(auth)
      .send({ content: "remote work and leave", mode: "build" });
    expect(reason.body.steps.length).toBeGreaterThan(ask.body.steps.length);
    expect(reason.body.output).toContain("In short:");
    expect(build.body.output).toMatch(/^# remote work and leave\n\n## /);
    const followUp = await request(app)
      .post("/queries")
      .set(auth)
      .send({ content: "and equipment?", id: ask.body.id });
    expect(followUp.body.output).toMatch(/^Following up on “remote work and leave”/);
    expect(control.creates).toHaveLength(4);
  });
});

describe("embedded workspace answers", () => {
  it("cite every passage they quote, even when the quoted text has code and brackets", async () => {
    const passages = [
      {
        filename: "guide.md",
        heading: "Markers",
        text: "Markers look like `[1] handbook.pdf, p. 4` in text. Another sentence about markers follows here.",
        page: null,
        title: null,
      },
      {
        filename: "guide.md",
        heading: "Other",
        text: "Markers are also written as [handbook.pdf] by some services.",
        page: null,
        title: null,
      },
    ];
    const { app } = createEmbeddedWorkspace({
      index: new DocumentIndex(passages),
      workspaces: ["acme"],
      stepDelayMs: 0,
    });
    const response = await request(app).post("/queries").set(auth).send({ content: "markers", mode: "ask" });
    const { citeSources } = await import("../../../src/answer/cite-sources.js");
    const { citations, sources } = citeSources(response.body.output, []);
    expect(sources).toHaveLength(2);
    expect(sources.every((source) => source.cited)).toBe(true);
    expect(citations).toHaveLength(2);
  });
});
