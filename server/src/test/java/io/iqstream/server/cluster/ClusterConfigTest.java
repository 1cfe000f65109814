package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.config.ConfigException;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.ServerConfig;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClusterConfigTest {
    private static final String SECRET = "cluster-secret-0123456789abcdef0123456789";

    @Test
    void offByDefault() {
        ServerConfig c = ConfigParser.parse(new String[0], Map.of());
        assertFalse(c.clustered());
        assertEquals(List.of(), c.peers());
        assertEquals(null, c.advertise());
    }

    @Test
    void peersAdvertiseAndSecretFromFlagsOrEnvironment() {
        ServerConfig c = ConfigParser.parse(new String[] {"--peers", "10.0.0.1:8080, iqstream-nodes:8080",
                "--advertise", "10.0.0.1:8080", "--cluster-secret", SECRET}, Map.of());
        assertTrue(c.clustered());
        assertEquals(List.of("10.0.0.1:8080", "iqstream-nodes:8080"), c.peers());
        ServerConfig e = ConfigParser.parse(new String[0], Map.of("IQSTREAM_PEERS", "a:1",
                "IQSTREAM_ADVERTISE", "10.0.0.2:8080", "IQSTREAM_CLUSTER_SECRET", SECRET));
        assertEquals("10.0.0.2:8080", e.advertise());
        assertEquals(SECRET, e.clusterSecret());
    }

    @Test
    void refusesAnIncompleteOrMalformedCluster() {
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--peers", "a:1",
                "--cluster-secret", SECRET}, Map.of()), "no --advertise");
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--peers", "a:1",
                "--advertise", "b:2"}, Map.of()), "no secret");
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--peers", "a:1",
                "--advertise", "b:2", "--cluster-secret", "short"}, Map.of()), "short secret");
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--peers", "a",
                "--advertise", "b:2", "--cluster-secret", SECRET}, Map.of()), "no port");
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--advertise", "b:2"},
                Map.of()), "advertise without peers");
    }
}
