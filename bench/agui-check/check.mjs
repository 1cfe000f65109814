// Validates every line of an NDJSON file of AG-UI events against @ag-ui/core's zod schemas.
// Usage: bench/agui-check/run-check.sh (installs, writes the sample, runs this), or
//        (cd bench/agui-check && npm ci && node check.mjs ../target/sample-run.ndjson)
// The sample is written by AgUiRunTest (mvn -pl bench test).
import { EventSchemas } from '@ag-ui/core/schemas';
import fs from 'fs';

const lines = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n');
let bad = 0;
for (const [i, line] of lines.entries()) {
  const r = EventSchemas.safeParse(JSON.parse(line));
  if (!r.success) {
    bad++;
    console.log(`event ${i}: ${JSON.stringify(r.error.issues)}`);
  }
}
console.log(`${lines.length} events, ${bad} invalid`);
process.exit(bad === 0 ? 0 : 1);
