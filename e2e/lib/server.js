// Starts the real IQ-Stream server as a child process on an ephemeral loopback port and stops it.
// The jar comes from env IQSTREAM_JAR, default ../server/target/iqstream-server.jar (what CI builds).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));

export const DEFAULT_JAR = path.resolve(here, "..", "..", "server", "target", "iqstream-server.jar");

/** A secret of at least 32 bytes, fresh per test file. */
export function randomSecret() {
  return "e2e-" + [...crypto.getRandomValues(new Uint8Array(24))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function javaCommand() {
  // run-tests.sh sets IQSTREAM_JAVA (scripts/server-for-tests.sh): java with paranoid leak detection, output logged
  if (process.env.IQSTREAM_JAVA) return process.env.IQSTREAM_JAVA;
  if (process.env.JAVA_HOME) return path.join(process.env.JAVA_HOME, "bin", "java");
  return "java";
}

/**
 * Starts `java -jar $IQSTREAM_JAR serve --host 127.0.0.1 --port 0 ...extraArgs` and resolves once it
 * prints its listening line. Rejects if it exits first or takes longer than startTimeoutMs.
 * @returns {Promise<{baseUrl: string, port: number, output: () => string, stop: () => Promise<void>}>}
 */
export async function startServer(extraArgs, { startTimeoutMs = 30_000 } = {}) {
  const jar = process.env.IQSTREAM_JAR || DEFAULT_JAR;
  if (!existsSync(jar)) throw new Error(`server jar not found: ${jar} (build it: mvn -B -q -pl server package -DskipTests, or set IQSTREAM_JAR)`);
  const args = ["-jar", jar, "serve", "--host", "127.0.0.1", "--port", "0", ...extraArgs];
  const child = spawn(javaCommand(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not print its listening line within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
    const onData = (chunk) => {
      output += chunk.toString();
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
