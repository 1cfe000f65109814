package io.iqstream.server.run;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/** The events of one WORKLOAD.md run: 429 AG-UI events, UUID ids, epoch-ms timestamps, an 8 KiB tool result. */
public final class StandardRun {
    private StandardRun() {}

    public static List<String> events(long seed) {
        Random rnd = new Random(seed);
        String thread = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        String run = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        String m1 = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        String m2 = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        String tool = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        String toolMsg = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        long ts = 1_764_460_000_000L;
        List<String> e = new ArrayList<>();
        e.add("{\"type\":\"RUN_STARTED\",\"threadId\":\"" + thread + "\",\"runId\":\"" + run + "\",\"timestamp\":" + ts + "}");
        e.add("{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"" + m1 + "\",\"role\":\"assistant\",\"timestamp\":"
                + (ts += 20) + "}");
        for (int i = 0; i < 180; i++) {
            e.add("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"" + m1 + "\",\"delta\":\"" + token(rnd)
                    + "\",\"timestamp\":" + (ts += 20) + "}");
        }
        e.add("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"" + m1 + "\",\"timestamp\":" + (ts += 20) + "}");
        e.add("{\"type\":\"TOOL_CALL_START\",\"toolCallId\":\"" + tool + "\",\"toolCallName\":\"search_web\","
                + "\"parentMessageId\":\"" + m1 + "\",\"timestamp\":" + (ts += 20) + "}");
        for (int i = 0; i < 40; i++) {
            e.add("{\"type\":\"TOOL_CALL_ARGS\",\"toolCallId\":\"" + tool + "\",\"delta\":\"" + token(rnd)
                    + "\",\"timestamp\":" + (ts += 20) + "}");
        }
        e.add("{\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"" + tool + "\",\"timestamp\":" + (ts += 20) + "}");
        StringBuilder content = new StringBuilder();
        while (content.length() < 8192) {
            content.append(token(rnd)).append(' ');
        }
        e.add("{\"type\":\"TOOL_CALL_RESULT\",\"messageId\":\"" + toolMsg + "\",\"toolCallId\":\"" + tool
                + "\",\"role\":\"tool\",\"content\":\"" + content.substring(0, 8192) + "\",\"timestamp\":"
                + (ts += 1500) + "}");
        e.add("{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"" + m2 + "\",\"role\":\"assistant\",\"timestamp\":"
                + (ts += 20) + "}");
        for (int i = 0; i < 200; i++) {
            e.add("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"" + m2 + "\",\"delta\":\"" + token(rnd)
                    + "\",\"timestamp\":" + (ts += 20) + "}");
        }
        e.add("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"" + m2 + "\",\"timestamp\":" + (ts += 20) + "}");
        e.add("{\"type\":\"RUN_FINISHED\",\"threadId\":\"" + thread + "\",\"runId\":\"" + run + "\",\"timestamp\":"
                + (ts + 20) + "}");
        return e;
    }

    /** A token of 2-8 lowercase letters. */
    private static String token(Random rnd) {
        int n = 2 + rnd.nextInt(7);
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = (char) ('a' + rnd.nextInt(26));
        }
        return new String(c);
    }
}
