package io.iqstream.server.auth;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;

/**
 * Development-mode credentials, made when the server starts with no key configured: a random
 * shared secret and two ready tokens signed with it, for the startup banner and its curl
 * example. The publisher token may publish and subscribe on every run and list every thread's
 * runs (the {@code threads} right: what a backend such as the CopilotKit runner needs to find,
 * follow and stop a thread's runs); the subscriber token may only subscribe, on every run. Both
 * are valid for {@link #TOKEN_TTL}.
 *
 * <p>The secret is 48 random bytes written as 64 base64url characters; its UTF-8 text is the
 * HMAC key, as for {@code --jwt-secret}, so HS256, HS384 and HS512 all accept it.
 *
 * <p>Immutable; any thread.
 */
public final class DevCredentials {

    /** How long the ready tokens are valid. */
    public static final Duration TOKEN_TTL = Duration.ofHours(24);

    private static final int SECRET_RANDOM_BYTES = 48;

    private final String secret;
    private final String publisherToken;
    private final String subscriberToken;

    private DevCredentials(String secret, String publisherToken, String subscriberToken) {
        this.secret = secret;
        this.publisherToken = publisherToken;
        this.subscriberToken = subscriberToken;
    }

    /** A fresh random secret and its two tokens. */
    public static DevCredentials generate() {
        byte[] random = new byte[SECRET_RANDOM_BYTES];
        new SecureRandom().nextBytes(random);
        String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        TokenMinter minter = new TokenMinter(secret);
        return new DevCredentials(secret,
                minter.mint(List.of("*"), List.of("*"), List.of("*"), TOKEN_TTL),
                minter.mint(List.of(), List.of("*"), TOKEN_TTL));
    }

    /** The shared secret: give it to {@link AuthSettings#hmac(String)}. */
    public String secret() {
        return secret;
    }

    /** May publish and subscribe on every run, and list every thread's runs. */
    public String publisherToken() {
        return publisherToken;
    }

    /** May subscribe on every run, not publish. */
    public String subscriberToken() {
        return subscriberToken;
    }
}
