package io.iqstream.bench.driver;

import io.iqstream.bench.load.Run;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;

/**
 * A Durable Streams SSE read of a JSON stream, as the protocol's client consumes it: {@code event: data} frames
 * whose data is a JSON array of messages, each batch followed by an {@code event: control} frame whose
 * {@code streamNextOffset} is where the batch ends. The messages of the batches before a control frame are handed
 * to the run when that frame arrives, each with its offset as the resume id, as one batch ({@link Run#batchStart}):
 * a browser commits a batch when it knows its offset, so one that is to drop inside a batch takes the whole batch
 * and drops at its end, and resumes after it: a batch is never half taken (handing it the offset with a batch half
 * taken would lose the rest; the previous offset, resend what it took). One per connection, confined to the run's
 * event loop.
 */
final class DurableStreamsSseSink implements SseSubscriber.Sink {
  private static final ByteBuf NEXT_OFFSET = Unpooled.unreleasableBuffer(
      Unpooled.copiedBuffer("\"streamNextOffset\":\"", StandardCharsets.US_ASCII)).asReadOnly();

  /** The data frames' arrays since the last control frame, back to back; null when none. */
  private ByteBuf pending;

  @Override
  public void onEvent(Run run, Channel channel, String id, ByteBuf data, long recvNs) {
    if (!data.isReadable()) {
      return;
    }
    byte first = data.getByte(data.readerIndex());
    if (first == '[') {
      if (pending == null) {
        pending = Unpooled.buffer(Math.max(256, data.readableBytes())); // unpooled: a cut connection leaves it to the GC
      }
      pending.writeBytes(data, data.readerIndex(), data.readableBytes());
      return;
    }
    if (first != '{') {
      return;
    }
    String offset = nextOffset(data);
    ByteBuf batch = pending;
    pending = null;
    if (batch == null) {
      return;
    }
    run.batchStart();
    try {
      forEachMessage(batch, message -> run.onEvent(channel, offset, message, recvNs));
    } finally {
      run.batchEnd(channel);
      batch.release();
    }
  }

  /** The control frame's {@code streamNextOffset}, null when it has none. */
  static String nextOffset(ByteBuf control) {
    int at = ByteBufUtil.indexOf(NEXT_OFFSET, control);
    if (at < 0) {
      return null;
    }
    int start = at + NEXT_OFFSET.readableBytes();
    int end = control.indexOf(start, control.writerIndex(), (byte) '"');
    return end < 0 ? null : control.toString(start, end - start, StandardCharsets.US_ASCII);
  }

  /** Where each message of a run of JSON arrays goes: a slice of the element's bytes. */
  interface MessageSink {
    void accept(ByteBuf message);
  }

  /**
   * Hands each element of the JSON arrays in {@code arrays} (one or more, back to back) to {@code sink} as a slice
   * of its bytes, without parsing the values: strings and nesting are tracked only to find the top-level commas.
   */
  static void forEachMessage(ByteBuf arrays, MessageSink sink) {
    int depth = 0;
    boolean inString = false;
    int start = -1;
    int end = arrays.writerIndex();
    for (int i = arrays.readerIndex(); i < end; i++) {
      byte b = arrays.getByte(i);
      if (inString) {
        if (b == '\\') {
          i++;
        } else if (b == '"') {
          inString = false;
        }
        continue;
      }
      switch (b) {
        case '"' -> {
          inString = true;
          if (depth == 1 && start < 0) {
            start = i;
          }
        }
        case '[', '{' -> {
          if (depth == 1 && start < 0) {
            start = i;
          }
          depth++;
        }
        case ']', '}' -> {
          depth--;
          if (depth == 0) {
            emit(arrays, start, i, sink);
            start = -1;
          }
        }
        case ',' -> {
          if (depth == 1) {
            emit(arrays, start, i, sink);
            start = -1;
          }
        }
        case ' ', '\t', '\r', '\n' -> { }
        default -> {
          if (depth == 1 && start < 0) {
            start = i;
          }
        }
      }
    }
  }

  private static void emit(ByteBuf arrays, int start, int endExclusive, MessageSink sink) {
    if (start < 0) {
      return;
    }
    int end = endExclusive;
    while (end > start && isSpace(arrays.getByte(end - 1))) {
      end--;
    }
    sink.accept(arrays.slice(start, end - start));
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\t' || b == '\r' || b == '\n';
  }
}
