package io.iqstream.server.auth;

/** STUB until the auth package lands. */
public final class Authorizer {
    private final AuthSettings settings;

    private Authorizer(AuthSettings settings) {
        this.settings = settings;
    }

    public static Authorizer create(AuthSettings s) {
        return new Authorizer(s);
    }

    public AuthDecision authorize(String tokenOrNull, String runId, Right right) {
        if (!settings.enabled()) {
            return AuthDecision.ALLOWED;
        }
        return tokenOrNull == null ? AuthDecision.UNAUTHENTICATED : AuthDecision.ALLOWED;
    }

    public AuthDecision authorizeAny(String tokenOrNull, String runId) {
        return authorize(tokenOrNull, runId, Right.SUBSCRIBE);
    }

    public String describe() {
        return "stub";
    }
}
