// IQ-Stream demo page: starts a simulated agent run and renders its AG-UI events as they stream in,
// read with the browser's own EventSource. "Cut connection" closes the stream; the page reopens it
// with ?lastEventId=<last id rendered>, so the relay replays exactly what was missed.
// No build step, no dependencies: this file is served as is from the server's classpath.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const RESUME_DELAY_MS = 1000;

  /** Everything about the run on screen; reset by start(). */
  let run = null;

  function newRun(info) {
    return {
      id: info.runId,
      token: info.token,
      eventsUrl: info.eventsUrl,
      expected: info.events,
      source: null,
      connectedAtMs: 0,
      lastId: 0,
      received: 0,
      connections: 0,
      cuts: 0,
      replayed: 0,
      gaps: 0,
      duplicates: 0,
      latenciesMs: [],
      ended: false,
      resumeTimer: 0,
      messages: new Map(),
      tools: new Map(),
    };
  }

  function setState(state, text) {
    document.body.dataset.state = state;
    $("state").textContent = text || state;
    $("cut").disabled = !(state === "streaming" || state === "connecting");
    $("ask").disabled = state === "streaming" || state === "connecting" || state === "cut" || state === "starting";
  }

  function logLine(text) {
    const li = document.createElement("li");
    li.textContent = new Date().toISOString().slice(11, 23) + " " + text;
    $("log").append(li);
    li.scrollIntoView({ block: "nearest" });
  }

  async function start() {
    if (run && run.source) run.source.close();
    if (run) clearTimeout(run.resumeTimer);
    run = null;
    setState("starting", "starting");
    $("transcript").replaceChildren();
    $("log").replaceChildren();
    const speed = Number($("speed").value) || 1;
    let info;
    try {
      const response = await fetch("/demo/api/runs", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ speed }),
      });
      const body = await response.json();
      if (!response.ok) throw new Error(body.message || response.status + " " + response.statusText);
      info = body;
    } catch (e) {
      setState("error", "could not start a run: " + e.message);
      return;
    }
    run = newRun(info);
    bubble("user", info.question);
    $("run-id").textContent = run.id;
    $("events-expected").textContent = String(run.expected);
    render();
    connect();
  }

  /** Opens the stream; after a cut, from the event after the last one rendered. */
  function connect() {
    const current = run;
    let url = current.eventsUrl + "?access_token=" + encodeURIComponent(current.token);
    if (current.lastId > 0) url += "&lastEventId=" + current.lastId;
    current.connections++;
    current.connectedAtMs = Date.now();
    logLine(current.lastId > 0 ? "reconnect, resuming after event " + current.lastId : "connect");
    setState("connecting", current.lastId > 0 ? "resuming" : "connecting");
    const source = new EventSource(url);
    current.source = source;
    source.onopen = () => {
      if (run !== current || current.source !== source) return;
      // Events produced before the stream opened waited for the connection, not for the relay.
      current.connectedAtMs = Date.now();
      setState("streaming", "streaming");
      logLine("open");
    };
    source.onmessage = (message) => {
      if (run !== current || current.source !== source) return;
      onMessage(current, message);
    };
    source.onerror = () => {
      if (run !== current || current.source !== source || current.ended) return;
      if (source.readyState === EventSource.CLOSED) {
        setState("error", "the relay refused the stream");
        logLine("stream refused");
      } else {
        setState("connecting", "reconnecting");
        logLine("connection lost; the browser reconnects by itself");
      }
    };
    render();
  }

  function cut() {
    const current = run;
    if (!current || !current.source || current.ended) return;
    current.source.close();
    current.source = null;
    current.cuts++;
    setState("cut", "cut: resuming in " + RESUME_DELAY_MS / 1000 + " s");
    logLine("connection cut after event " + current.lastId);
    render();
    current.resumeTimer = setTimeout(() => {
      if (run === current && !current.ended) connect();
    }, RESUME_DELAY_MS);
  }

  function onMessage(current, message) {
    const id = Number(message.lastEventId);
    if (!(id > current.lastId)) {
      current.duplicates++;
      render();
      return;
    }
    if (id !== current.lastId + 1) current.gaps += id - current.lastId - 1;
    current.lastId = id;
    current.received++;
    const event = JSON.parse(message.data);
    if (typeof event.timestamp === "number") {
      if (event.timestamp < current.connectedAtMs) {
        current.replayed += current.connections > 1 ? 1 : 0;
      } else {
        current.latenciesMs.push(Math.max(0, Date.now() - event.timestamp));
      }
    }
    apply(current, event);
    render();
  }

  /** Renders one AG-UI event. */
  function apply(current, event) {
    switch (event.type) {
      case "RUN_STARTED":
        logLine("RUN_STARTED");
        break;
      case "TEXT_MESSAGE_START": {
        const node = bubble("assistant", "");
        node.classList.add("streaming");
        current.messages.set(event.messageId, node);
        break;
      }
      case "TEXT_MESSAGE_CONTENT": {
        const node = current.messages.get(event.messageId);
        if (node) node.firstChild.appendData(event.delta);
        break;
      }
      case "TEXT_MESSAGE_END": {
        const node = current.messages.get(event.messageId);
        if (node) node.classList.remove("streaming");
        break;
      }
      case "TOOL_CALL_START":
        current.tools.set(event.toolCallId, toolCard(event.toolCallName));
        break;
      case "TOOL_CALL_ARGS": {
        const card = current.tools.get(event.toolCallId);
        if (card) card.args.firstChild.appendData(event.delta);
        break;
      }
      case "TOOL_CALL_END": {
        const card = current.tools.get(event.toolCallId);
        if (card) {
          card.status.textContent = "running…";
          try {
            card.args.textContent = JSON.stringify(JSON.parse(card.args.textContent), null, 2);
          } catch (e) {
            // arguments that are not JSON stay as streamed
          }
        }
        break;
      }
      case "TOOL_CALL_RESULT": {
        const card = current.tools.get(event.toolCallId);
        if (card) showResult(card, event.content);
        break;
      }
      case "RUN_FINISHED":
        finish(current, "finished", "finished");
        break;
      case "RUN_ERROR":
        bubble("assistant error", "The run failed: " + (event.message || event.code || "unknown error"));
        finish(current, "error", "run error" + (event.code ? " (" + event.code + ")" : ""));
        break;
      default:
        break; // AG-UI grows; other events are counted, not drawn
    }
  }

  function finish(current, state, text) {
    current.ended = true;
    if (current.source) current.source.close(); // the stream ends here; no reconnect needed
    current.source = null;
    setState(state, text);
    draw(); // the counters with the end, not a frame after it (the last event's count beside "finished")
    logLine("run ended after " + current.received + " events");
  }

  function bubble(kind, text) {
    const node = document.createElement("div");
    node.className = "bubble " + kind;
    node.append(document.createTextNode(text));
    $("transcript").append(node);
    return node;
  }

  function toolCard(name) {
    const node = document.createElement("div");
    node.className = "tool";
    const head = document.createElement("div");
    const nameNode = document.createElement("span");
    nameNode.className = "name";
    nameNode.textContent = "tool call: " + name;
    const status = document.createElement("span");
    status.className = "status";
    status.textContent = "writing arguments…";
    head.append(nameNode, status);
    const args = document.createElement("pre");
    args.className = "args";
    args.append(document.createTextNode(""));
    node.append(head, args);
    $("transcript").append(node);
    return { node, status, args };
  }

  function showResult(card, content) {
    let summary = (content.length / 1024).toFixed(1) + " KiB";
    let pretty = content;
    try {
      const parsed = JSON.parse(content);
      if (Array.isArray(parsed.results)) summary = parsed.results.length + " results, " + summary;
      pretty = JSON.stringify(parsed, null, 2);
    } catch (e) {
      // a result that is not JSON is shown as sent
    }
    card.status.textContent = "done";
    const details = document.createElement("details");
    const label = document.createElement("summary");
    label.textContent = "result: " + summary;
    const pre = document.createElement("pre");
    pre.textContent = pretty;
    details.append(label, pre);
    card.node.append(details);
  }

  function percentile(values, p) {
    if (values.length === 0) return NaN;
    const sorted = values.slice().sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  }

  function ms(value) {
    return Number.isFinite(value) ? value + " ms" : "–";
  }

  let renderQueued = false;

  /** Updates the counters once per frame at most. */
  function render() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => {
      renderQueued = false;
      draw();
    });
  }

  /** Draws the counters now. */
  function draw() {
    if (!run) return;
    $("events").textContent = String(run.received);
    $("last-id").textContent = String(run.lastId);
    $("connections").textContent = String(run.connections);
    $("cuts").textContent = String(run.cuts);
    $("replayed").textContent = String(run.replayed);
    $("gaps").textContent = String(run.gaps);
    $("duplicates").textContent = String(run.duplicates);
    const lat = run.latenciesMs;
    $("latency-last").textContent = ms(lat.length ? lat[lat.length - 1] : NaN);
    $("latency-p50").textContent = ms(percentile(lat, 0.5));
    $("latency-max").textContent = ms(lat.length ? Math.max(...lat) : NaN);
  }

  /** For tests and the curious: the run's counters, read from the console as demo.stats(). */
  window.demo = {
    stats: () => run && {
      runId: run.id,
      expected: run.expected,
      received: run.received,
      lastId: run.lastId,
      connections: run.connections,
      cuts: run.cuts,
      replayed: run.replayed,
      gaps: run.gaps,
      duplicates: run.duplicates,
      ended: run.ended,
      liveLatencies: run.latenciesMs.length,
    },
  };

  const requestedSpeed = Number(new URLSearchParams(location.search).get("speed"));
  if (requestedSpeed > 0) {
    const value = String(requestedSpeed);
    if (![...$("speed").options].some((option) => option.value === value)) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = value + "×";
      $("speed").append(option);
    }
    $("speed").value = value;
  }
  $("ask").addEventListener("click", start);
  $("cut").addEventListener("click", cut);
  setState("idle", "idle");
})();
