package io.iqstream.server.auth;

/** STUB until the auth package lands. */
public enum Right { PUBLISH, SUBSCRIBE }
