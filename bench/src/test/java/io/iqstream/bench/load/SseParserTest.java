package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseParserTest {
  private final List<String> events = new ArrayList<>();
  private final List<Long> retries = new ArrayList<>();
  private final SseParser parser = new SseParser(new SseParser.Listener() {
    @Override
    public void onEvent(String id, ByteBuf data) {
      events.add(id + "|" + data.toString(StandardCharsets.UTF_8));
    }

    @Override
    public void onRetry(long retryMs) {
      retries.add(retryMs);
    }
  });

  private void feed(String s) {
    ByteBuf b = Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    parser.feed(b, ByteBufAllocator.DEFAULT);
    b.release();
  }

  @Test
  void parsesFramesSplitAtEveryByte() {
    String stream = "retry: 1000\n\nid: 1\ndata: {\"a\":1}\n\n: hb\n\nid: 2\ndata: {\"b\":2}\n\n";
    for (char c : stream.toCharArray()) {
      feed(String.valueOf(c));
    }
    assertEquals(List.of("1|{\"a\":1}", "2|{\"b\":2}"), events);
    assertEquals(List.of(1000L), retries);
    parser.release();
  }

  @Test
  void handlesCrLfNoSpaceAndMultiLineData() {
    feed("id:7\r\ndata:x\r\ndata: y\r\n\r\ndata: z\n\n");
    assertEquals(List.of("7|x\ny", "null|z"), events);
    parser.release();
  }

  @Test
  void keepsPartialFrameAcrossLargeFeeds() {
    StringBuilder sb = new StringBuilder();
    for (int i = 1; i <= 500; i++) {
      sb.append("id: ").append(i).append("\ndata: ").append("v".repeat(100)).append(i).append("\n\n");
    }
    String all = sb.toString();
    int cut = all.length() / 3;
    feed(all.substring(0, cut));
    feed(all.substring(cut, 2 * cut + 7));
    feed(all.substring(2 * cut + 7));
    assertEquals(500, events.size());
    assertEquals("500|" + "v".repeat(100) + 500, events.get(499));
    parser.release();
  }
}
