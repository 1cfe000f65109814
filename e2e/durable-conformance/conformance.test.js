// Runs the Durable Streams server conformance suite (pinned in package.json) against one server.
//   CONFORMANCE_TEST_URL   the server's base URL (the suite requests ${url}/v1/stream/<name>);
//                          when unset, the protocol's Node reference server (@durable-streams/server)
//                          is started in this process and tested instead: the baseline figure.
import { afterAll, beforeAll, describe } from "vitest";
import { runConformanceTests } from "@durable-streams/server-conformance-tests";
import { DurableStreamTestServer } from "@durable-streams/server";

const config = { baseUrl: process.env.CONFORMANCE_TEST_URL ?? "", longPollTimeoutMs: 500 };
let reference = null;

if (!process.env.CONFORMANCE_TEST_URL) {
  reference = new DurableStreamTestServer({ port: 0, longPollTimeout: 500 });
  config.baseUrl = await reference.start();
}

describe(`Durable Streams conformance: ${reference ? "reference server" : config.baseUrl}`, () => {
  afterAll(async () => {
    if (reference) await reference.stop();
  });
  runConformanceTests(config);
});
