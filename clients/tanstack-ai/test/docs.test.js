// The docs' example is the code the tests run: every ```js file=<path> block of docs/TANSTACK-AI.md and this
// package's README.md is that file of the repository, verbatim (test/instance.js runs examples/chat.js), and the
// ```diff block is the change from memoryStream: undone on examples/chat.js, it gives a route that serves a
// resumable run with TanStack's memoryStream.
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { lookup, scriptedModel, WORDS } from "./model.js";
import { sseEvents } from "./support.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const DOCS = ["docs/TANSTACK-AI.md", "clients/tanstack-ai/README.md"];
const EXAMPLE = "clients/tanstack-ai/examples/chat.js";

/** The fenced blocks of `markdown`: [{ info, text }]. */
function blocks(markdown) {
  const out = [];
  let current = null;
  for (const line of markdown.split("\n")) {
    if (current === null && /^```\S/.test(line)) current = { info: line.slice(3).trim(), lines: [] };
    else if (current !== null && line === "```") {
      out.push({ info: current.info, text: current.lines.map((l) => `${l}\n`).join("") });
      current = null;
    } else if (current !== null) current.lines.push(line);
  }
  assert.equal(current, null, "a block is not closed");
  return out;
}

test("the file blocks of the docs are the repository's files, verbatim", () => {
  for (const doc of DOCS) {
    const files = blocks(readFileSync(repo + doc, "utf8")).filter((b) => /^js file=/.test(b.info));
    assert.ok(files.some((b) => b.info === `js file=${EXAMPLE}`), `${doc} shows ${EXAMPLE}`);
    for (const { info, text } of files) {
      const file = info.slice("js file=".length);
      assert.equal(text, readFileSync(repo + file, "utf8"), `${doc}: the block for ${file} differs from the file`);
    }
  }
});

/** examples/chat.js with the diff undone: each run of + lines (found verbatim) replaced by the - lines before it. */
function undo(diff, source) {
  const hunks = [];
  for (const line of diff.split("\n").filter((l) => l.length > 0)) {
    const sign = line[0];
    assert.ok(sign === "-" || sign === "+", `a diff line that is neither - nor +: ${line}`);
    if (sign === "-" && (hunks.length === 0 || hunks.at(-1).plus.length > 0)) hunks.push({ minus: [], plus: [] });
    hunks.at(-1)[sign === "-" ? "minus" : "plus"].push(line.slice(1));
  }
  let text = source;
  for (const { minus, plus } of hunks) {
    const after = `${plus.join("\n")}\n`;
    assert.ok(text.includes(after), `the + lines are not in ${EXAMPLE}:\n${after}`);
    text = text.replace(after, `${minus.join("\n")}\n`);
  }
  return text;
}

test("the diff is the change from memoryStream: undone, the route serves a resumable run with memoryStream", async () => {
  const doc = readFileSync(repo + DOCS[0], "utf8");
  const diffs = blocks(doc).filter((b) => b.info === "diff");
  assert.equal(diffs.length, 1);
  const before = undo(diffs[0].text, readFileSync(repo + EXAMPLE, "utf8"));
  assert.doesNotMatch(before, /iqstreamStream|@iqstream\/tanstack-ai/);
  assert.match(before, /memoryStream\(request\)/);
  const path = fileURLToPath(new URL(`../examples/.memory-chat-${process.pid}.js`, import.meta.url));
  writeFileSync(path, before);
  try {
    const { chatRoutes } = await import(path);
    const routes = chatRoutes({ adapter: scriptedModel(), tools: [lookup] });
    const body = JSON.stringify({ threadId: "t", runId: "memory-run", messages: [{ role: "user", content: "Q3?" }] });
    const post = await routes.POST(new Request("http://app/api/chat", { method: "POST", headers: { "X-Run-Id": "memory-run" }, body }));
    const events = sseEvents(await post.text());
    const text = events.map((e) => JSON.parse(e.data)).filter((c) => c.type === "TEXT_MESSAGE_CONTENT").map((c) => c.delta).join("");
    assert.equal(text, WORDS.join(""));
    const join = await routes.GET(new Request("http://app/api/chat?offset=-1&runId=memory-run"));
    assert.deepEqual(sseEvents(await join.text()), events, "joinRun replays the run");
  } finally {
    rmSync(path, { force: true });
  }
});
