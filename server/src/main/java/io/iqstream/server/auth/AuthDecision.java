package io.iqstream.server.auth;

/** STUB until the auth package lands. */
public enum AuthDecision { ALLOWED, UNAUTHENTICATED, FORBIDDEN }
