package io.iqstream.bench.server;

import io.iqstream.bench.driver.NchanDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * Nchan 1.3.6 on nginx 1.22 (Debian), its fastest documented setup: memory store, access log off, a
 * message buffer that holds a whole run, a shared memory zone large enough for every message kept
 * (70 s of messages at K = 1,000 overflowed 1 GiB), EventSource subscribers that resume with
 * Last-Event-ID.
 * Authorization on: every subscriber request carries its own signed link for its channel only
 * ({@code secure_link}: MD5 over expiry, channel and a secret, checked by nginx per request) — the
 * nearest built-in equivalent of IQ-Stream's per-subscriber JWT check.
 */
public final class NchanServer extends ProcessServer {
  private final Path peers;
  private final NchanDriver.Publish publish;
  private int cpus;

  public NchanServer(Path peers, NchanDriver.Publish publish) {
    this.peers = peers;
    this.publish = publish;
  }

  @Override
  public String name() {
    return "nchan";
  }

  /** The publisher this instance drives. */
  public NchanDriver.Publish publish() {
    return publish;
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-nchan.sh");
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    this.cpus = cpus;
    byte[] b = new byte[16];
    new SecureRandom().nextBytes(b);
    String secret = HexFormat.of().formatHex(b);
    int port = ServerProcess.freePort();
    Path dir = Files.createTempDirectory("iqstream-bench-nchan");
    Files.createDirectories(dir.resolve("logs"));
    Files.createDirectories(dir.resolve("tmp"));
    String conf = """
        load_module /usr/lib/nginx/modules/ngx_nchan_module.so;
        worker_processes %d;
        worker_rlimit_nofile 20000;
        daemon off;
        master_process on;
        pid %s/nginx.pid;
        error_log %s/logs/error.log warn;
        events {
          worker_connections 19000;
          multi_accept on;
        }
        http {
          access_log off;
          client_body_temp_path %s/tmp/body;
          proxy_temp_path %s/tmp/proxy;
          fastcgi_temp_path %s/tmp/fastcgi;
          uwsgi_temp_path %s/tmp/uwsgi;
          scgi_temp_path %s/tmp/scgi;
          keepalive_requests 1000000;
          keepalive_timeout 300s;
          client_body_buffer_size 16k;
          nchan_shared_memory_size 8192m;
          nchan_message_buffer_length 1000;
          nchan_message_timeout 70s;
          server {
            listen 127.0.0.1:%d backlog=4096;
            location ~ ^/pub/(?<chan>[A-Za-z0-9._~:-]+)$ {
              nchan_publisher http websocket;
              nchan_channel_id $chan;
            }
            location ~ ^/sub/(?<chan>[A-Za-z0-9._~:-]+)$ {
              secure_link $arg_md5,$arg_expires;
              secure_link_md5 "$secure_link_expires$chan %s";
              if ($secure_link = "") { return 403; }
              if ($secure_link = "0") { return 410; }
              nchan_subscriber eventsource;
              nchan_channel_id $chan;
              nchan_subscriber_first_message oldest;
            }
          }
        }
        """.formatted(cpus, dir, dir, dir, dir, dir, dir, dir, port, secret);
    Path confFile = dir.resolve("nginx.conf");
    Files.writeString(confFile, conf);
    process = ServerProcess.start(List.of("nginx", "-p", dir.toString(), "-e",
        dir.resolve("logs/error.log").toString(), "-c", confFile.toString()), placement, dir, null);
    process.awaitPort(port, 10_000);
    return new NchanDriver("127.0.0.1", port, secret, publish);
  }

  @Override
  public String description() {
    return Peers.firstLine("nginx", "-v") + " with libnginx-mod-nchan (Debian); "
        + "worker_processes " + cpus + ", memory store, message buffer 1000, publish: "
        + publish.description() + ", EventSource subscribe with Last-Event-ID resume,"
        + " per-subscriber secure_link (MD5) authorization";
  }
}
