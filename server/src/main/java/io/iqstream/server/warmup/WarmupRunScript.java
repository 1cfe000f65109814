package io.iqstream.server.warmup;

import java.nio.charset.StandardCharsets;

/**
 * The events of one made-up agent answer for the warm-up, shaped like the benchmark's workload: 429 AG-UI events
 * (a text message, a tool call with 40 argument fragments and an 8 KiB result, a second message), with escapes
 * and non-ASCII text so the validator's string paths are exercised too. Immutable, any thread.
 */
final class WarmupRunScript {
    static final int EVENTS = 429;
    private static final int ARGS_FRAGMENTS = 40;
    private static final String[] WORDS = {" the", " stream", " token", " relay", " agent", " caf\u00e9", " \\\"quoted\\\"",
        " line\\n", " tab\\t", " \\u00e9t\u00e9", ".", ",", " answer", " 42", " r\u00e9sum\u00e9"};
    private static final String ARGS = "{\\\"query\\\":\\\"resumable SSE relays\\\",\\\"limit\\\":10,"
            + "\\\"filters\\\":{\\\"since\\\":\\\"2026-01-01\\\",\\\"kinds\\\":[\\\"report\\\",\\\"paper\\\"]}}";
    private static final String RESULT = "result line with some text, numbers 12345 and a quote \\\" ".repeat(140);

    private WarmupRunScript() {
    }

    /** The events of run {@code runId}, one JSON object each, without the line feed. */
    static byte[][] events(String runId, int seed) {
        byte[][] out = new byte[EVENTS][];
        String thread = "warmup-" + runId; // a thread of its own: one thread holds at most 1,000 runs per worker
        int toolStart = 201;
        int argsEnd = toolStart + 1 + ARGS_FRAGMENTS;
        for (int i = 0; i < EVENTS; i++) {
            String json;
            String message = i < toolStart ? "m1-" + runId : "m2-" + runId;
            if (i == 0) {
                json = "{\"type\":\"RUN_STARTED\",\"threadId\":\"" + thread + "\",\"runId\":\"" + runId + "\"}";
            } else if (i == 1 || i == argsEnd + 2) {
                json = "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"" + message + "\",\"role\":\"assistant\"}";
            } else if (i == toolStart - 1 || i == EVENTS - 2) {
                json = "{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"" + message + "\"}";
            } else if (i == toolStart) {
                json = "{\"type\":\"TOOL_CALL_START\",\"toolCallId\":\"t-" + runId
                        + "\",\"toolCallName\":\"search\",\"parentMessageId\":\"m1-" + runId + "\"}";
            } else if (i > toolStart && i < argsEnd) {
                int k = i - toolStart - 1;
                int from = k * ARGS.length() / ARGS_FRAGMENTS;
                int to = (k + 1) * ARGS.length() / ARGS_FRAGMENTS;
                // a fragment must not split an escape: move both ends back off a backslash
                from = unsplit(from);
                to = k == ARGS_FRAGMENTS - 1 ? ARGS.length() : unsplit(to);
                json = "{\"type\":\"TOOL_CALL_ARGS\",\"toolCallId\":\"t-" + runId + "\",\"delta\":\""
                        + ARGS.substring(from, to) + "\"}";
            } else if (i == argsEnd) {
                json = "{\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"t-" + runId + "\"}";
            } else if (i == argsEnd + 1) {
                json = "{\"type\":\"TOOL_CALL_RESULT\",\"messageId\":\"r-" + runId + "\",\"toolCallId\":\"t-" + runId
                        + "\",\"content\":\"" + RESULT + "\",\"role\":\"tool\"}";
            } else if (i == EVENTS - 1) {
                json = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"" + thread + "\",\"runId\":\"" + runId + "\"}";
            } else {
                json = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"" + message + "\",\"delta\":\""
                        + WORDS[(i * 7 + seed) % WORDS.length] + "\",\"timestamp\":" + (1_796_000_000_000L + i) + "}";
            }
            out[i] = json.getBytes(StandardCharsets.UTF_8);
        }
        return out;
    }

    /** {@code at}, or an earlier index, so that a cut there does not fall inside a backslash escape. */
    private static int unsplit(int at) {
        int i = at;
        while (i > 0 && ARGS.charAt(i - 1) == '\\') {
            i--;
        }
        return i;
    }
}
