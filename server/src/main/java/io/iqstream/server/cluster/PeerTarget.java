package io.iqstream.server.cluster;

/**
 * A request target as a peer request carries it through the JDK's HTTP client, which takes only what
 * {@link java.net.URI} takes: printable ASCII that URI refuses ({@code "#<>[\]^`{|}} and space), which Netty's parser
 * accepts, is percent-encoded (a fragment is dropped, as the request parser drops it), so every target the server accepted can be relayed (never a 500) and means the same
 * at the peer once decoded. Everything else (letters, digits, {@code -_.!~*'();/?:@&=+$,} and {@code %} escapes,
 * already checked by {@code RequestTarget}) is kept as sent. Stateless; any thread.
 */
final class PeerTarget {
    private static final String KEEP = "-_.!~*'();/?:@&=+$,%";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private PeerTarget() {}

    /**
     * A decoded path (a fork's source, as its header names it) as a target that decodes back to it: its {@code %},
     * {@code ?} and {@code #} escaped, then {@link #encode}d.
     */
    static String pathOf(String decodedPath) {
        return encode(decodedPath.replace("%", "%25").replace("?", "%3F").replace("#", "%23"));
    }

    /** {@code target} with every character {@link java.net.URI} refuses percent-encoded (UTF-8). */
    static String encode(String target) {
        int end = target.indexOf('#');
        if (end >= 0) {
            // a fragment is never sent to a server: the request parser drops it, so the peer request does too
            return encode(target.substring(0, end));
        }
        StringBuilder out = null;
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            boolean keep = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || KEEP.indexOf(c) >= 0;
            if (keep) {
                if (out != null) {
                    out.append(c);
                }
                continue;
            }
            if (out == null) {
                out = new StringBuilder(target.length() + 16).append(target, 0, i);
            }
            byte[] bytes = String.valueOf(c).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            if (Character.isHighSurrogate(c) && i + 1 < target.length()) {
                bytes = target.substring(i, i + 2).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                i++;
            }
            for (byte b : bytes) {
                out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            }
        }
        return out == null ? target : out.toString();
    }
}
