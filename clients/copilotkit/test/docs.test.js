// The docs' example is the code the tests run: every ```js file=<path> block of docs/COPILOTKIT.md and
// this package's README.md is that file of the repository, verbatim (test/instance.js and
// test/browser/reload.test.js run examples/server.js).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const DOCS = ["docs/COPILOTKIT.md", "clients/copilotkit/README.md"];

/** The fenced blocks whose info string names a file: [{ file, text }]. */
export function fileBlocks(markdown) {
  const blocks = [];
  let current = null;
  for (const line of markdown.split("\n")) {
    const open = /^```\w+ file=(\S+)\s*$/.exec(line);
    if (current === null && open) {
      current = { file: open[1], lines: [] };
    } else if (current !== null && line === "```") {
      blocks.push({ file: current.file, text: current.lines.map((l) => `${l}\n`).join("") });
      current = null;
    } else if (current !== null) {
      current.lines.push(line);
    }
  }
  assert.equal(current, null, "a file block is not closed");
  return blocks;
}

test("the example blocks of the docs are the repository's files, verbatim", () => {
  for (const doc of DOCS) {
    const blocks = fileBlocks(readFileSync(repo + doc, "utf8"));
    assert.ok(blocks.some((b) => b.file === "clients/copilotkit/examples/server.js"), `${doc} shows examples/server.js`);
    for (const { file, text } of blocks) {
      assert.equal(text, readFileSync(repo + file, "utf8"), `${doc}: the block for ${file} differs from the file`);
    }
  }
});

test("a block that drifted from its file is told apart", () => {
  const [block] = fileBlocks("text\n```js file=a.js\nconst a = 1;\n```\n");
  assert.deepEqual(block, { file: "a.js", text: "const a = 1;\n" });
  assert.notEqual(block.text, "const a = 2;\n");
});
