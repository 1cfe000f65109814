package io.iqstream.bench.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Incremental Server-Sent Events parser: bytes in, one callback per event frame out. Handles "\n" and
 * "\r\n" line endings, comments, {@code id:}, {@code retry:} and one or more {@code data:} lines.
 *
 * <p>Confined to the channel's event loop. The {@code data} buffer handed to {@link Listener#onEvent} is
 * valid only during the call.
 */
public final class SseParser {
  /** Receives parsed frames. */
  public interface Listener {
    /** A frame with data; {@code id} is null when the frame carried no id line. */
    void onEvent(String id, ByteBuf data);

    /** A {@code retry:} field. */
    default void onRetry(long retryMs) {}
  }

  private final Listener listener;
  private ByteBuf cumulation;
  /** Parse position relative to the reader index (start of the frame in progress). */
  private int scanRel;
  private String id;
  private int dataStartRel = -1;
  private int dataLength;
  private ByteBuf multiLineData;

  public SseParser(Listener listener) {
    this.listener = listener;
  }

  /** Feeds bytes; does not release {@code in}. */
  public void feed(ByteBuf in, ByteBufAllocator alloc) {
    if (cumulation == null) {
      cumulation = alloc.heapBuffer(Math.max(1024, in.readableBytes()));
    }
    cumulation.writeBytes(in);
    parse();
    if (!cumulation.isReadable()) {
      cumulation.clear();
    } else if (cumulation.readerIndex() > 16 * 1024) {
      cumulation.discardReadBytes(); // relative positions stay valid
    }
  }

  private void parse() {
    ByteBuf buf = cumulation;
    while (true) {
      int lineStart = buf.readerIndex() + scanRel;
      int nl = buf.indexOf(lineStart, buf.writerIndex(), (byte) '\n');
      if (nl < 0) {
        return;
      }
      int lineEnd = nl;
      if (lineEnd > lineStart && buf.getByte(lineEnd - 1) == '\r') {
        lineEnd--;
      }
      scanRel = nl + 1 - buf.readerIndex();
      int length = lineEnd - lineStart;
      if (length == 0) {
        dispatch(buf);
        buf.readerIndex(nl + 1);
        scanRel = 0;
        continue;
      }
      if (buf.getByte(lineStart) == ':') {
        continue; // comment (heartbeat)
      }
      int colon = buf.indexOf(lineStart, lineEnd, (byte) ':');
      int nameEnd = colon < 0 ? lineEnd : colon;
      int valueStart = colon < 0 ? lineEnd : colon + 1;
      if (valueStart < lineEnd && buf.getByte(valueStart) == ' ') {
        valueStart++;
      }
      int nameLength = nameEnd - lineStart;
      if (nameLength == 4 && buf.getByte(lineStart) == 'd' && buf.getByte(lineStart + 1) == 'a') {
        addData(buf, valueStart, lineEnd - valueStart);
      } else if (nameLength == 2 && buf.getByte(lineStart) == 'i') {
        id = buf.toString(valueStart, lineEnd - valueStart, StandardCharsets.UTF_8);
      } else if (nameLength == 5 && buf.getByte(lineStart) == 'r') {
        try {
          listener.onRetry(Long.parseLong(
              buf.toString(valueStart, lineEnd - valueStart, StandardCharsets.US_ASCII)));
        } catch (NumberFormatException ignored) {
          // a bad retry field is ignored, as EventSource does
        }
      }
    }
  }

  private void addData(ByteBuf buf, int start, int length) {
    if (dataStartRel < 0 && multiLineData == null) {
      dataStartRel = start - buf.readerIndex();
      dataLength = length;
      return;
    }
    if (multiLineData == null) {
      multiLineData = buf.alloc().heapBuffer();
      multiLineData.writeBytes(buf, buf.readerIndex() + dataStartRel, dataLength);
      dataStartRel = -1;
    }
    multiLineData.writeByte('\n').writeBytes(buf, start, length);
  }

  private void dispatch(ByteBuf buf) {
    if (multiLineData != null) {
      try {
        listener.onEvent(id, multiLineData);
      } finally {
        multiLineData.release();
        multiLineData = null;
      }
    } else if (dataStartRel >= 0) {
      listener.onEvent(id, buf.slice(buf.readerIndex() + dataStartRel, dataLength));
    }
    dataStartRel = -1;
    dataLength = 0;
    id = null;
  }

  /** Releases buffered bytes. */
  public void release() {
    if (cumulation != null) {
      cumulation.release();
      cumulation = null;
    }
    if (multiLineData != null) {
      multiLineData.release();
      multiLineData = null;
    }
  }
}
