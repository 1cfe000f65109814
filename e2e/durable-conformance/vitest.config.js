// The packaged CLI of @durable-streams/server-conformance-tests 0.3.6 finds no test files (durable-streams
// #284), so the suite runs from this folder's own runner file under an explicit include.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["conformance.test.js"],
    testTimeout: 30000,
    hookTimeout: 30000,
    fileParallelism: false,
  },
});
