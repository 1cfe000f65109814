package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.ingest.PublishSession;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.wire.HttpReplies;
import io.iqstream.server.wire.Json;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * {@code GET /v1/runs/{id}} (the run's status as JSON) and {@code DELETE /v1/runs/{id}}: on a running run a stop
 * (RUN_ERROR {@code STOPPED} appended, the open publishing request answered 409 {@code run_stopped}, the run kept
 * for {@code --retention}; 200 with the run's last event id), on an ended run a drop (204, tombstoned) unless
 * {@code ?ifRunning=true} (then 409 {@code run_ended}, the run kept). 404 for a
 * run never seen, 410 for one expired. Stateless; called on the run's owner loop, after authorization.
 */
public final class RunStatusHandler {
    private RunStatusHandler() {}

    /** {@code ?ifRunning=true}: the caller means a stop only; an ended run is left as it is (409 run_ended). */
    private static boolean onlyIfRunning(HttpRequest request) {
        RequestTarget target = RequestTarget.parse(request.uri());
        return target != null && "true".equals(target.parameter("ifRunning"));
    }

    public static void serve(ServerContext server, ChannelHandlerContext ctx, HttpRequest request,
            RunRegistry registry, String runId, boolean keepAlive) {
        HttpReplies replies = server.replies();
        Run run = registry.get(runId);
        if (run == null) {
            boolean gone = registry.isGone(runId);
            server.metrics().refused(gone ? Refusal.GONE : Refusal.NOT_FOUND);
            replies.error(ctx, request, gone ? "gone" : "not_found",
                    gone ? HttpResponseStatus.GONE : HttpResponseStatus.NOT_FOUND,
                    gone ? "run " + runId + " has expired" : "no run " + runId, keepAlive);
            return;
        }
        if (request.method().equals(HttpMethod.DELETE) && !run.isEnded()) {
            Object publisher = run.publisher();
            registry.stop(run);
            if (publisher instanceof PublishSession session) {
                session.stopped();
            }
            StringBuilder sb = new StringBuilder(64).append("{\"runId\":");
            Json.quote(sb, runId);
            sb.append(",\"stopped\":true,\"lastEventId\":").append(run.lastEventId()).append('}');
            replies.json(ctx, request, HttpResponseStatus.OK, sb.toString(), keepAlive);
            return;
        }
        if (request.method().equals(HttpMethod.DELETE) && onlyIfRunning(request)) {
            // a stop that must never drop: the run ended before the stop arrived, and is kept
            server.metrics().refused(Refusal.RUN_ENDED);
            replies.error(ctx, request, Refusal.RUN_ENDED, HttpResponseStatus.CONFLICT,
                    "run " + runId + " has already ended (?ifRunning=true: not dropped)", keepAlive);
            return;
        }
        if (request.method().equals(HttpMethod.DELETE)) {
            registry.drop(run);
            replies.empty(ctx, request, HttpResponseStatus.NO_CONTENT, keepAlive);
            return;
        }
        StringBuilder sb = new StringBuilder(128).append("{\"runId\":");
        Json.quote(sb, runId);
        sb.append(",\"events\":").append(run.lastEventId())
                .append(",\"lastEventId\":").append(run.lastEventId())
                .append(",\"bytes\":").append(run.log().frameBytes())
                .append(",\"ended\":").append(run.isEnded())
                .append(",\"publishing\":").append(run.publisher() != null)
                .append(",\"subscribers\":").append(run.readerCount())
                .append(",\"ageMs\":").append((System.nanoTime() - run.createdNanos()) / 1_000_000)
                .append(",\"protocol\":\"").append(run.protocol().label()).append('"')
                .append('}');
        replies.json(ctx, request, HttpResponseStatus.OK, sb.toString(), keepAlive);
    }
}
