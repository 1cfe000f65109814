package io.iqstream.bench.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Durable Streams SSE sink's framing: a data frame's JSON array split into its messages, a control's offset. */
class DurableStreamsSseSinkTest {
  /** The messages of {@code arrays} (JSON arrays back to back), as text. */
  static List<String> messages(String arrays) {
    ByteBuf buf = Unpooled.copiedBuffer(arrays, StandardCharsets.UTF_8);
    List<String> out = new ArrayList<>();
    DurableStreamsSseSink.forEachMessage(buf, m -> out.add(m.toString(StandardCharsets.UTF_8)));
    buf.release();
    return out;
  }

  @Test
  void splitsTopLevelElementsByteForByte() {
    assertEquals(List.of("{\"type\":\"RUN_STARTED\", \"x\" : 1}", "{\"type\":\"RUN_FINISHED\"}"),
        messages("[{\"type\":\"RUN_STARTED\", \"x\" : 1},{\"type\":\"RUN_FINISHED\"}]"));
  }

  @Test
  void commasBracketsAndEscapedQuotesInsideStringsDoNotSplit() {
    String tricky = "{\"delta\":\"a, [b] {c} \\\"d,\\\" \\\\\",\"n\":[1,2,{\"k\":\"]\"}]}";
    assertEquals(List.of(tricky, "\"a string, message\"", "42", "[1,[2]]", "null"),
        messages("[" + tricky + ", \"a string, message\" ,42,[1,[2]],\n null ]"));
  }

  @Test
  void arraysBackToBackAndEmptyArrays() {
    assertEquals(List.of("{\"a\":1}", "{\"b\":2}", "{\"c\":3}"), messages("[{\"a\":1}][][{\"b\":2},{\"c\":3}]"));
    assertEquals(List.of(), messages("[]"));
  }

  @Test
  void controlFramesOffset() {
    ByteBuf control = Unpooled.copiedBuffer(
        "{\"streamNextOffset\":\"0000000000000000_0000000000000056\",\"upToDate\":true,\"streamClosed\":true}",
        StandardCharsets.US_ASCII);
    assertEquals("0000000000000000_0000000000000056", DurableStreamsSseSink.nextOffset(control));
    assertNull(DurableStreamsSseSink.nextOffset(Unpooled.copiedBuffer("{\"upToDate\":true}",
        StandardCharsets.US_ASCII)));
  }
}
