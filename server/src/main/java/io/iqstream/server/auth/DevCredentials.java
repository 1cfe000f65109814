package io.iqstream.server.auth;

/** STUB until the auth package lands. */
public final class DevCredentials {
    public static DevCredentials generate() {
        return new DevCredentials();
    }

    public String secret() {
        return "stub-secret-stub-secret-stub-secret";
    }

    public String publisherToken() {
        return "stub";
    }

    public String subscriberToken() {
        return "stub";
    }
}
