import { startServer, startInstance } from "./support.js";
const iq = await startServer([]);
const token = iq.token({ publish: ["tsa.*"], subscribe: ["tsa.*"] });
const a = await startInstance({ iqUrl: iq.baseUrl, token });
try {
  const body = { threadId: "t1", runId: "r1", messages: [{ id: "u1", role: "user", content: "hi" }], tools: [], context: [], forwardedProps: {}, state: {} };
  const res = await fetch(a.url, { method: "POST", headers: { "Content-Type": "application/json", "X-Run-Id": "r1" }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
  console.log(res.status);
  try { console.log(await res.text()); } catch (e) { console.log("cut", e.message); }
  const st = await fetch(`${iq.baseUrl}/v1/runs/tsa.r1`, { headers: { Authorization: `Bearer ${token}` } });
  console.log(await st.text());
  console.log(await a.appends());
} finally { await a.close(); await iq.stop(); }
