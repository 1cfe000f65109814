package io.iqstream.server.auth;

/** STUB until the auth package lands. */
public final class TokenMinter {
    public TokenMinter(String hmacSecret) {}

    public String mint(java.util.List<String> publish, java.util.List<String> subscribe, java.time.Duration ttl) {
        return "stub";
    }
}
