package io.iqstream.server.auth;

/** STUB until the auth package lands. */
public record AuthSettings(boolean enabled, String hmacSecret, java.nio.file.Path publicKeyPem,
        java.nio.file.Path jwksFile, String issuer, String audience, java.time.Duration clockSkew, int cacheSize) {}
