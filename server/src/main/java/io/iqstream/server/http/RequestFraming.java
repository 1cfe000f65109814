package io.iqstream.server.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;

/**
 * The one framing rule of RFC 9112 section 6 that Netty's codec leaves to the application: a transfer coding the
 * server does not decode. The codec (4.2, RFC 9112 rules) already fails the other heads where request smuggling
 * lives — {@code Content-Length} beside {@code Transfer-Encoding}, {@code Transfer-Encoding} on HTTP/1.0,
 * {@code chunked} twice or not last — and those become 400 with the connection closed. It accepts
 * {@code Transfer-Encoding: gzip, chunked} (chunked last), whose de-chunked body would be gzip: this server decodes
 * no coding but chunked, so such a request is refused here, 501 (section 6.1), the connection closed, before the
 * step-down ({@link ChunkedBodyReader}) or anything else reads its body. {@code StepDownModel} generates every one of
 * these heads and checks that the codec alone and the step-down agree on each. Stateless; any thread.
 */
public final class RequestFraming {
    private RequestFraming() {}

    /** Whether the request names a transfer coding other than {@code chunked} (answered 501, closed). */
    public static boolean hasOtherCoding(HttpRequest request) {
        for (String line : request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
            for (String coding : line.split(",", -1)) {
                if (!HttpHeaderValues.CHUNKED.contentEqualsIgnoreCase(coding.strip())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether the request's body is chunked and nothing else: the step-down may read it. */
    public static boolean isPlainChunked(HttpRequest request) {
        return HttpUtil.isTransferEncodingChunked(request) && !hasOtherCoding(request);
    }
}
