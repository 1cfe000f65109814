package io.iqstream.server.testing;

import io.iqstream.server.auth.TokenMinter;
import java.time.Duration;
import java.util.List;

/** Tokens for tests, signed with {@link TestServer#SECRET}. */
public final class Tokens {
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);

    private Tokens() {}

    /** May publish and read every run. */
    public static String admin() {
        return MINTER.mint(List.of("*"), List.of("*"), Duration.ofHours(1));
    }

    public static String publisher(String... patterns) {
        return MINTER.mint(List.of(patterns), List.of(), Duration.ofHours(1));
    }

    public static String subscriber(String... patterns) {
        return MINTER.mint(List.of(), List.of(patterns), Duration.ofHours(1));
    }
}
