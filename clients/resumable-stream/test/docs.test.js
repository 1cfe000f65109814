// The docs' example is the code the tests run: every ```js file=<path> block of docs/AI-SDK.md is that file of
// the repository, verbatim (test/resume.test.js and test/browser run examples/routes.js through examples/server.js).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../../", import.meta.url));

/** The fenced blocks whose info string names a file: [{ file, text }]. */
function fileBlocks(markdown) {
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

test("docs/AI-SDK.md shows examples/routes.js verbatim, with the one changed import line", () => {
  const blocks = fileBlocks(readFileSync(`${repo}docs/AI-SDK.md`, "utf8"));
  assert.ok(blocks.some((b) => b.file === "clients/resumable-stream/examples/routes.js"));
  for (const { file, text } of blocks) {
    assert.equal(text, readFileSync(repo + file, "utf8"), `docs/AI-SDK.md: the block for ${file} differs from the file`);
  }
  const routes = readFileSync(`${repo}clients/resumable-stream/examples/routes.js`, "utf8");
  assert.match(routes, /^import \{ createResumableStreamContext \} from '@iqstream\/resumable-stream';$/m);
});

test("a block that drifted from its file is told apart", () => {
  const [block] = fileBlocks("text\n```js file=a.js\nconst a = 1;\n```\n");
  assert.deepEqual(block, { file: "a.js", text: "const a = 1;\n" });
  assert.notEqual(block.text, "const a = 2;\n");
});
