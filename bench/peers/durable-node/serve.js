// The protocol's Node reference server (@durable-streams/server 0.3.7) as the bench runs it: in memory (no
// dataDir), on 127.0.0.1, the port from argv[2]; the long-poll timeout the conformance suite uses (500 ms; the
// bench reads with SSE). Prints its URL once it listens.
import { DurableStreamTestServer } from "@durable-streams/server";

const port = Number(process.argv[2] ?? 0);
const server = new DurableStreamTestServer({ port, host: "127.0.0.1", longPollTimeout: 500 });
console.log(`listening on ${await server.start()}`);
const stop = () => server.stop().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
