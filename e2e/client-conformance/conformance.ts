// Runs the protocol's client conformance suite (third_party/durable-streams/packages/client-conformance-tests, the
// runner unchanged but for the server it points at) with one client adapter against DURABLE_STREAMS_TARGET_URL,
// and judges the run against reference-only.txt: every test passes but those listed there for this adapter, which
// must fail (a listed test that passes fails the run, so the list stays true).
//   tsx conformance.ts <label> <adapter: ts | an executable> [adapter's arguments...]
//   CONFORMANCE_LIST  the list (default: reference-only.txt beside this file)
//   CONFORMANCE_RESULTS_DIR  where to write <label>-results.json, every test's outcome (default: not written)
// Exit status 0 when the run matches the list; 1 otherwise.
import { readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { runConformanceTests } from "../../third_party/durable-streams/packages/client-conformance-tests/src/runner.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const [label, adapter, ...adapterArgs] = process.argv.slice(2)
const listFile = process.env.CONFORMANCE_LIST || path.join(here, "reference-only.txt")
if (!label || !adapter) {
  console.error("usage: tsx conformance.ts <label> <adapter> [adapter's arguments...]")
  process.exit(2)
}

/** The list's lines: `<adapters|*> <suite>/<test-id>`; `#` starts a comment (each group's reason). */
function expectedFailures(file: string, who: string): Set<string> {
  const ids = new Set<string>()
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.replace(/#.*/, "").trim()
    if (!line) continue
    const [adapters, id] = line.split(/\s+/)
    if (!id || !id.includes("/")) throw new Error(`${file}: not "<adapters> <suite>/<test>": ${raw}`)
    if (adapters === "*" || adapters.split(",").includes(who)) ids.add(id)
  }
  return ids
}

const expected = expectedFailures(listFile, label)
const summary = await runConformanceTests({ clientAdapter: adapter, clientArgs: adapterArgs })
if (process.env.CONFORMANCE_RESULTS_DIR) {
  writeFileSync(path.join(process.env.CONFORMANCE_RESULTS_DIR, `${label}-results.json`), JSON.stringify(summary.results, null, 1))
}

const seen = new Set<string>()
const unexpectedFailures: Array<string> = []
const unexpectedPasses: Array<string> = []
let passed = 0
let referenceOnly = 0
let skipped = 0
for (const r of summary.results) {
  const id = `${r.suite}/${r.test}`
  seen.add(id)
  if (r.skipped) skipped++
  else if (r.passed) {
    passed++
    if (expected.has(id)) unexpectedPasses.push(id)
  } else if (expected.has(id)) referenceOnly++
  else unexpectedFailures.push(`${id}: ${r.error ?? "failed"}`)
}
const missing = [...expected].filter((id) => !seen.has(id))

console.log(`client conformance (${label}): ${passed} passed, ${referenceOnly} reference-only, ${skipped} skipped` +
  (unexpectedFailures.length ? `, ${unexpectedFailures.length} FAILED` : ""))
for (const f of unexpectedFailures) console.log(`  FAILED (not in ${path.basename(listFile)}): ${f}`)
for (const p of unexpectedPasses) console.log(`  PASSED but listed as reference-only (remove it from ${path.basename(listFile)}): ${p}`)
for (const m of missing) console.log(`  listed but not run (a test renamed or gone): ${m}`)
process.exit(unexpectedFailures.length || unexpectedPasses.length || missing.length || summary.results.length === 0 ? 1 : 0)
