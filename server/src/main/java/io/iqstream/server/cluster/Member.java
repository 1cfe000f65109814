package io.iqstream.server.cluster;

/**
 * One cluster node as its peers reach it: {@code host:port} ({@link #key()} is what rendezvous hashing and
 * every node's view compare, so every node must spell it the same way: the resolved IP). Immutable.
 */
public record Member(String host, int port) implements Comparable<Member> {

    /** Parses {@code host:port} (already validated by the config). */
    public static Member parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new Member(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    public String key() {
        return host + ":" + port;
    }

    @Override
    public int compareTo(Member o) {
        return key().compareTo(o.key());
    }

    @Override
    public String toString() {
        return key();
    }
}
